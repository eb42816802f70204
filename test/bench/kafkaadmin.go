package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// topicsFor returns the topics the template "<prefix>.{event_type}" gives
// for the workload's event types.
func topicsFor(prefix string) []string {
	out := make([]string, len(eventTypes))
	for i, t := range eventTypes {
		out[i] = prefix + "." + t.Name
	}
	return out
}

// admin is a kadm client for the benchmark's housekeeping.
type admin struct {
	cl  *kgo.Client
	adm *kadm.Client
}

func newAdmin(brokers []string) (*admin, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ClientID("bench-admin"))
	if err != nil {
		return nil, fmt.Errorf("kafka admin client: %w", err)
	}
	return &admin{cl: cl, adm: kadm.NewClient(cl)}, nil
}

func (a *admin) Close() { a.cl.Close() }

// setMessageMaxBytes raises the brokers' message.max.bytes (the largest
// record batch they accept) at run time.
func (a *admin) setMessageMaxBytes(ctx context.Context, n int) error {
	v := strconv.Itoa(n)
	resps, err := a.adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "message.max.bytes", Value: &v}})
	if err == nil {
		for _, r := range resps {
			if r.Err != nil {
				err = r.Err
				break
			}
		}
	}
	if err != nil {
		return fmt.Errorf("setting broker message.max.bytes=%s: %w", v, err)
	}
	return nil
}

// createTopics creates topics with partitions partitions each, so that
// consumers can be assigned before the first record is produced.
func (a *admin) createTopics(ctx context.Context, partitions int, topics ...string) error {
	resps, err := a.adm.CreateTopics(ctx, int32(partitions), 1, nil, topics...)
	if err != nil {
		return fmt.Errorf("creating topics %v: %w", topics, err)
	}
	for _, r := range resps {
		if r.Err != nil {
			return fmt.Errorf("creating topic %s: %w", r.Topic, r.Err)
		}
	}
	return nil
}

// deleteTopics drops topics to free the broker's memory; errors are
// returned but harmless to the measurements.
func (a *admin) deleteTopics(ctx context.Context, topics ...string) error {
	resps, err := a.adm.DeleteTopics(ctx, topics...)
	if err != nil {
		return fmt.Errorf("deleting topics: %w", err)
	}
	for _, r := range resps {
		if r.Err != nil {
			return fmt.Errorf("deleting topic %s: %w", r.Topic, r.Err)
		}
	}
	return nil
}
