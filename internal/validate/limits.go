package validate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/binlog-router/binlog-router/internal/route"
)

// sizeLimit is one message size limit of the cluster.
type sizeLimit struct {
	topic    string // "" for the brokers' message.max.bytes
	role     string // "outbox", "checkpoint", "dead-letter"
	bytes    int
	override bool // the topic's own max.message.bytes, not the brokers' default
}

// limitsInput is what checkLimits judges.
type limitsInput struct {
	flag      int         // --max-message-bytes
	broker    int         // the smallest message.max.bytes of the brokers; 0 when not read
	brokerErr error       // reading the brokers' configs failed
	topics    []sizeLimit // existing topics the router writes to
	topicsErr error       // listing or describing the topics failed
	seeds     string      // --kafka-brokers, for the fix
}

// limits compares --max-message-bytes with the brokers' message.max.bytes
// and the max.message.bytes of the existing topics the router writes to:
// the checkpoint topic, the dead-letter topic and the topics that match the
// topic template.
func (v *validator) limits(adm *kadm.Client, brokerIDs []int32) Check {
	in := limitsInput{flag: v.cfg.MaxMessageBytes, seeds: strings.Join(v.cfg.Brokers, ",")}
	in.brokerErr = v.do(func(ctx context.Context) (err error) {
		in.broker, err = brokerMaxMessageBytes(ctx, adm, brokerIDs)
		return err
	})
	in.topicsErr = v.do(func(ctx context.Context) (err error) {
		in.topics, err = v.topicLimits(ctx, adm)
		return err
	})
	return checkLimits(in)
}

// brokerMaxMessageBytes is the smallest message.max.bytes of the brokers.
func brokerMaxMessageBytes(ctx context.Context, adm *kadm.Client, ids []int32) (int, error) {
	rcs, err := adm.DescribeBrokerConfigs(ctx, ids...)
	if err != nil && len(rcs) == 0 {
		return 0, err
	}
	least := 0
	for _, rc := range rcs {
		if rc.Err != nil {
			return 0, rc.Err
		}
		for _, c := range rc.Configs {
			if c.Key == "message.max.bytes" {
				if n, err := strconv.Atoi(c.MaybeValue()); err == nil && (least == 0 || n < least) {
					least = n
				}
			}
		}
	}
	return least, nil
}

// topicLimits describes the existing topics the router writes to.
func (v *validator) topicLimits(ctx context.Context, adm *kadm.Client) ([]sizeLimit, error) {
	details, err := adm.ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	pattern, _ := route.TopicPattern(v.cfg.TopicTemplate) // nil for a template run refuses anyway
	roles := map[string]string{}
	for _, name := range details.Names() {
		if pattern != nil && pattern.MatchString(name) {
			roles[name] = "outbox"
		}
	}
	if details.Has(v.cfg.CheckpointTopic) {
		roles[v.cfg.CheckpointTopic] = "checkpoint"
	}
	if t := v.cfg.DeadLetterTopic; t != "" && details.Has(t) {
		roles[t] = "dead-letter"
	}
	if len(roles) == 0 {
		return nil, nil
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range roles {
			if !yield(n) {
				return
			}
		}
	})
	rcs, err := adm.DescribeTopicConfigs(ctx, names...)
	if err != nil && len(rcs) == 0 {
		return nil, err
	}
	var out []sizeLimit
	for _, rc := range rcs {
		if rc.Err != nil {
			return nil, fmt.Errorf("topic %s: %w", rc.Name, rc.Err)
		}
		for _, c := range rc.Configs {
			if c.Key != "max.message.bytes" {
				continue
			}
			if n, err := strconv.Atoi(c.MaybeValue()); err == nil {
				out = append(out, sizeLimit{topic: rc.Name, role: roles[rc.Name], bytes: n,
					override: c.Source == kmsg.ConfigSourceDynamicTopicConfig})
			}
		}
	}
	slices.SortFunc(out, func(a, b sizeLimit) int { return strings.Compare(a.topic, b.topic) })
	return out, nil
}

// checkLimits judges the limits: one below --max-message-bytes is a
// warning, since rows between the two sizes become row errors (dead
// letters, or a stop by default) although the writer kept them under
// --max-message-bytes.
func checkLimits(in limitsInput) Check {
	const name = "message size"
	var below, fits []string
	var fixes []string
	if in.broker > 0 {
		desc := fmt.Sprintf("the brokers' message.max.bytes %d (every topic without its own max.message.bytes, and the topics the router creates)", in.broker)
		if in.broker < in.flag {
			below = append(below, desc)
			fixes = append(fixes, fmt.Sprintf("raise the brokers' message.max.bytes to %d", in.flag))
		} else {
			fits = append(fits, fmt.Sprintf("the brokers' message.max.bytes %d", in.broker))
		}
	}
	for _, t := range in.topics {
		if !t.override {
			continue // the brokers' limit, judged above
		}
		desc := fmt.Sprintf("%s topic %s: max.message.bytes %d", t.role, t.topic, t.bytes)
		if t.bytes < in.flag {
			below = append(below, desc)
			fixes = append(fixes, fmt.Sprintf("kafka-configs.sh --bootstrap-server %s --alter --entity-type topics --entity-name %s --add-config max.message.bytes=%d", in.seeds, t.topic, in.flag))
		} else {
			fits = append(fits, desc)
		}
	}
	var unread []string
	if in.brokerErr != nil {
		unread = append(unread, fmt.Sprintf("the brokers' message.max.bytes (%v%s)", in.brokerErr, grantHint(in.brokerErr, "DESCRIBE_CONFIGS on the cluster")))
	}
	if in.topicsErr != nil {
		unread = append(unread, fmt.Sprintf("the topics' max.message.bytes (%v%s)", in.topicsErr, grantHint(in.topicsErr, "DESCRIBE_CONFIGS on the router's topics")))
	}
	switch {
	case len(below) > 0:
		return warn(name, strings.Join(fixes, "; ")+fmt.Sprintf("; or lower --max-message-bytes to %d so that the writers' limit is the brokers'", smallestBelow(in)),
			"--max-message-bytes is %d but %s: a record larger than that limit is a row error (dead-lettered with --on-invalid=dead-letter, else the router stops at it; sizes count before compression); the router sizes its record batches to each topic's limit",
			in.flag, strings.Join(below, "; "))
	case len(unread) > 0:
		return warn(name, "grant the router's principal DESCRIBE_CONFIGS on the cluster and its topics, or check by hand that message.max.bytes and the topics' max.message.bytes are at least --max-message-bytes",
			"--max-message-bytes %d; cannot read %s: the router then assumes --max-message-bytes fits every topic, and a batch over a smaller limit stops it with MESSAGE_TOO_LARGE", in.flag, strings.Join(unread, "; "))
	}
	detail := fmt.Sprintf("--max-message-bytes %d fits", in.flag)
	if len(fits) > 0 {
		detail += ": " + strings.Join(fits, "; ")
	}
	return ok(name, "%s", detail)
}

func smallestBelow(in limitsInput) int {
	least := in.flag
	if in.broker > 0 {
		least = min(least, in.broker)
	}
	for _, t := range in.topics {
		if t.override {
			least = min(least, t.bytes)
		}
	}
	return least
}

func grantHint(err error, acl string) string {
	if errors.Is(err, kerr.ClusterAuthorizationFailed) || errors.Is(err, kerr.TopicAuthorizationFailed) {
		return "; grant " + acl
	}
	return ""
}
