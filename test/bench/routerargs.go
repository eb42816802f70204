package main

import (
	"strconv"
	"strings"
)

// routerRun names one router process and what it routes.
type routerRun struct {
	Name     string   // --name, fresh per run
	Prefix   string   // topic prefix, fresh per run
	Delivery string   // exactly-once or at-least-once
	Start    position // --start gtid:<Start>; empty means earliest
	Extra    []string // more flags
}

func (r routerRun) topics() []string        { return topicsFor(r.Prefix) }
func (r routerRun) checkpointTopic() string { return r.Prefix + "_checkpoints" }

// routerArgs are the flags of `binlog-router run` for r in e.
func (e *env) routerArgs(r routerRun) []string {
	start := "earliest"
	if len(r.Start) > 0 {
		start = "gtid:" + r.Start.String()
	}
	args := []string{
		"--mysql-addr", e.maria.Addr(),
		"--mysql-user", "root",
		"--kafka-brokers", strings.Join(e.kafka.Brokers, ","),
		"--outbox-table", benchDB + "." + outboxTable,
		"--topic-template", r.Prefix + ".{event_type}",
		"--checkpoint-topic", r.checkpointTopic(),
		"--name", r.Name,
		"--delivery", r.Delivery,
		"--start", start,
		"--server-id", strconv.Itoa(e.serverID()),
		"--log-format", "json",
	}
	args = append(args, r.Extra...)
	return append(args, e.extraRouterArgs...)
}
