package checkpoint

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// EnsureTopic creates topic with cleanup.policy=compact and one partition
// if it does not exist. An existing topic must be compacted: a deleting
// policy would lose the checkpoint after retention.
func EnsureTopic(ctx context.Context, adm *kadm.Client, topic string) error {
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
		return fmt.Errorf("creating checkpoint topic %q (compacted, 1 partition): %w; create it yourself or grant CREATE on the cluster", topic, err)
	}
	return nil
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
