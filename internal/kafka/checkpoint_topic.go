package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/binlog-router/binlog-router/internal/acl"
)

// EnsureTopic creates topic with cleanup.policy=compact and one partition
// if it does not exist, and returns once its partition has a leader. An
// existing topic must be compacted: a deleting policy would lose the
// checkpoint after retention.
func EnsureCheckpointTopic(ctx context.Context, adm *kadm.Client, topic string) error {
	details, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return fmt.Errorf("listing checkpoint topic %q: %w", topic, err)
	}
	if d, ok := details[topic]; ok && d.Err == nil {
		return checkPolicy(ctx, adm, topic)
	}
	brokers, err := adm.ListBrokers(ctx)
	if err != nil {
		return fmt.Errorf("listing brokers: %w", err)
	}
	rf := int16(min(3, len(brokers)))
	if rf < 1 {
		rf = 1
	}
	policy := "compact"
	resp, err := adm.CreateTopic(ctx, 1, rf, map[string]*string{"cleanup.policy": &policy}, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		if acl.Denied(err) {
			return fmt.Errorf("creating checkpoint topic %q (compacted, 1 partition): %w; create it yourself, or grant the router's Kafka principal CREATE on topic %s (or on the cluster)", topic, err, topic)
		}
		return fmt.Errorf("creating checkpoint topic %q (compacted, 1 partition): %w; create it yourself", topic, err)
	}
	return waitLeader(ctx, adm, topic)
}

// waitLeader polls topic's metadata until partition 0 has a leader. Apache
// Kafka's brokers learn of a new topic from the controller after
// CreateTopics returns, so reading its offsets at once can find no
// partition (kfake has it at once).
func waitLeader(ctx context.Context, adm *kadm.Client, topic string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// kadm answers ListTopics from franz-go's metadata cache (5 s by
	// default), which still holds the topic as missing; asking for the
	// authorized operations makes it send a request.
	direct := kadm.WithAuthorizedOps(ctx)
	for {
		details, err := adm.ListTopics(direct, topic)
		if err == nil {
			d := details[topic]
			if p, ok := d.Partitions[0]; ok && d.Err == nil && p.Err == nil && p.Leader >= 0 {
				return nil
			}
			err = d.Err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("checkpoint topic %q was created but its partition has no leader yet: %w (last error: %v)", topic, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func checkPolicy(ctx context.Context, adm *kadm.Client, topic string) error {
	rc, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return nil // describing configs may be denied; the topic exists
	}
	r, err := rc.On(topic, nil)
	if err != nil || r.Err != nil {
		return nil
	}
	for _, c := range r.Configs {
		if c.Key == "cleanup.policy" && c.Value != nil && *c.Value == "delete" {
			return fmt.Errorf("checkpoint topic %q has cleanup.policy=delete: checkpoints would expire; set cleanup.policy=compact on it", topic)
		}
	}
	return nil
}
