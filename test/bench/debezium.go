package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/binlog-router/binlog-router/internal/devenv"
)

// The Debezium stage runs Debezium's MariaDB connector with the Outbox
// Event Router (Kafka Connect in distributed mode, one worker) and the
// router on the same backlog and the same Apache Kafka node, and reports
// each figure as router/Debezium.

// dbzSetup is one way of running Debezium: worker and connector settings
// over the repository's examples/debezium configuration.
type dbzSetup struct {
	Name      string            `json:"name"`
	Worker    map[string]string `json:"worker"`    // worker properties over connect-distributed.properties
	Connector map[string]string `json:"connector"` // connector settings over outbox-connector.json
}

// dbzTuned is Debezium tuned for throughput and latency as its
// documentation and Kafka's producer documentation advise: a larger batch
// and queue (max.batch.size, max.queue.size), a short poll interval (the
// queue otherwise waits up to 500 ms for a full batch), and producer
// batching (linger.ms, batch.size) with compression, as the router
// compresses. Measured here on the 500k backlog (two runs each): these
// settings gave 22,300-24,000 events/s against 14,400-16,500 for the
// defaults; the queue settings with snappy alone 13,400-17,100, with lz4
// 19,100; 1 MiB batches with five requests in flight were no faster.
func dbzTuned() dbzSetup {
	return dbzSetup{
		Name: "tuned",
		Worker: map[string]string{
			"producer.linger.ms":        "10",
			"producer.batch.size":       "262144",
			"producer.compression.type": "snappy",
		},
		Connector: map[string]string{
			"max.batch.size":   "8192",
			"max.queue.size":   "32768",
			"poll.interval.ms": "10",
		},
	}
}

// dbzTunedEOS is dbzTuned with Kafka Connect's exactly-once source
// support (KIP-618): one Kafka transaction per poll batch, offsets in the
// same transaction.
func dbzTunedEOS() dbzSetup {
	s := dbzTuned()
	s.Name = "tuned, exactly-once"
	s.Worker["exactly.once.source.support"] = "enabled"
	s.Connector["exactly.once.support"] = "required"
	s.Connector["transaction.boundary"] = "poll"
	return s
}

// dbzDefaults is the repository's configuration unchanged: what a
// migration starts from.
func dbzDefaults() dbzSetup {
	return dbzSetup{Name: "defaults", Worker: map[string]string{}, Connector: map[string]string{}}
}

// dbzWorld is the Debezium stage's Kafka: an Apache Kafka node, an admin
// client on it, and an env whose Kafka is that node, for the router runs.
type dbzWorld struct {
	apache *devenv.ApacheKafka
	env    *env
	admin  *admin
	props  map[string]string // connect-distributed.properties
	conn   map[string]string // outbox-connector.json's config
}

func (w *dbzWorld) Close() {
	if w.admin != nil {
		w.admin.Close()
	}
	if w.apache != nil {
		w.apache.Close()
	}
}

// newDbzWorld starts the Apache Kafka node and loads the repository's
// Debezium configuration.
func newDbzWorld(ctx context.Context, e *env, o *options) (*dbzWorld, error) {
	w := &dbzWorld{}
	var err error
	dir := filepath.Join(e.root, "examples", "debezium")
	if w.props, err = devenv.ReadProperties(filepath.Join(dir, "connect-distributed.properties")); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, "outbox-connector.json"))
	if err != nil {
		return nil, err
	}
	var body struct {
		Config map[string]string `json:"config"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		return nil, fmt.Errorf("outbox-connector.json: %w", err)
	}
	w.conn = body.Config
	e.log.Info().Msg("debezium: starting Apache Kafka")
	if w.apache, err = startApache(ctx, o); err != nil {
		return nil, err
	}
	if w.admin, err = newAdmin(w.apache.Brokers()); err != nil {
		w.Close()
		return nil, err
	}
	broker := apacheSide(w.apache)
	broker.Close = func() {} // the world stops the node
	ae := *e
	ae.kafka, ae.admin = broker, w.admin
	w.env = &ae
	return w, nil
}

// startWorker starts a Kafka Connect worker of setup s with its own group
// and internal topics, as connect-distributed.sh runs it.
func (w *dbzWorld) startWorker(ctx context.Context, s dbzSetup, id string) (*devenv.Connect, error) {
	props := maps.Clone(w.props)
	props["group.id"] = id
	props["offset.storage.topic"] = id + "-offsets"
	props["config.storage.topic"] = id + "-configs"
	props["status.storage.topic"] = id + "-status"
	maps.Copy(props, s.Worker)
	return devenv.StartConnect(ctx, devenv.ConnectConfig{
		Brokers:  w.apache.Brokers(),
		Props:    props,
		Heap:     "2g",
		JVMFlags: devenv.ConnectScriptJVMFlags,
	})
}

// connector returns the outbox connector's configuration for setup s on
// the benchmark's outbox table (its columns mapped to the Outbox Event
// Router's fields, topics "<prefix>.<event_type>" as the router's).
func (w *dbzWorld) connector(e *env, s dbzSetup, prefix, snapshot string) map[string]string {
	c := maps.Clone(w.conn)
	host, port, _ := strings.Cut(e.maria.Addr(), ":")
	maps.Copy(c, map[string]string{
		"database.hostname":     host,
		"database.port":         port,
		"database.user":         "root",
		"database.password":     "",
		"database.server.id":    strconv.Itoa(e.serverID()),
		"topic.prefix":          prefix,
		"database.include.list": benchDB,
		"table.include.list":    benchDB + "." + outboxTable,
		"snapshot.mode":         snapshot,
		"schema.history.internal.kafka.bootstrap.servers": strings.Join(w.apache.Brokers(), ","),
		"schema.history.internal.kafka.topic":             prefix + "-schema-history",
		"transforms.outbox.table.field.event.id":          "event_id",
		"transforms.outbox.table.field.event.key":         "aggregate_id",
		"transforms.outbox.route.by.field":                "event_type",
		"transforms.outbox.route.topic.replacement":       prefix + ".${routedByValue}",
	})
	maps.Copy(c, s.Connector)
	return c
}

// runDebezium is the Debezium stage: on an Apache Kafka node warmed up
// first (warmNode), the router and each Debezium setup catch up bl, then
// the router and the tuned setups follow live inserts at each rate.
func runDebezium(ctx context.Context, e *env, o *options, spec backlogSpec, bl backlog) (*dbzStage, error) {
	w, err := newDbzWorld(ctx, e, o)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	if err := warmNode(ctx, w.env, o, spec); err != nil {
		return nil, err
	}
	st := &dbzStage{Kafka: w.apache.Version(), Debezium: devenv.DebeziumVersion()}
	if rel, ok := devenv.DebeziumReleases[st.Debezium]; ok {
		st.Connect = rel.Connect
	}
	for _, s := range []dbzSetup{dbzTuned(), dbzTunedEOS(), dbzDefaults()} {
		st.Setups = append(st.Setups, s)
	}
	ae := w.env
	// Rounds of every catch-up, alternating as in the catch-up stage: the
	// broker's speed moves from run to run, and each side is reported by
	// its fastest run.
	for run := 1; run <= o.Runs; run++ {
		for _, delivery := range []string{"exactly-once", "at-least-once"} {
			if ctx.Err() != nil {
				return st, ctx.Err()
			}
			r := routerRun{Name: ae.unique("dbz-router"), Prefix: ae.unique("bench-dbz-router"), Delivery: delivery, Start: bl.Start}
			c, err := runCatchup(ctx, ae, o, "router "+delivery+" (Apache Kafka)", r, bl)
			if err != nil {
				return st, err
			}
			st.RouterRuns = append(st.RouterRuns, c)
		}
		for _, s := range st.Setups {
			if ctx.Err() != nil {
				return st, ctx.Err()
			}
			c, err := w.catchup(ctx, o, s, bl)
			if err != nil {
				return st, fmt.Errorf("debezium %s: %w", s.Name, err)
			}
			st.CatchupRuns = append(st.CatchupRuns, c)
		}
		st.pickBest()
	}
	if !o.Stages.has(stageLive) {
		return st, nil
	}
	e.log.Info().Msg("debezium: the router following live inserts")
	// Another seed: the live stage's event ids must stay unused.
	lo := *o
	lo.Seed++
	rl, err := runLive(ctx, ae, &lo, "exactly-once")
	if err != nil {
		return st, fmt.Errorf("router live on Apache Kafka: %w", err)
	}
	st.RouterLive = &rl
	for _, s := range []dbzSetup{dbzTuned(), dbzTunedEOS()} {
		if ctx.Err() != nil {
			return st, ctx.Err()
		}
		l, err := w.live(ctx, o, s)
		if err != nil {
			return st, fmt.Errorf("debezium %s live: %w", s.Name, err)
		}
		st.Live = append(st.Live, l)
	}
	return st, nil
}
