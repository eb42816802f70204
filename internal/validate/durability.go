package validate

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/binlog-router/binlog-router/internal/route"
)

// transactionLog is Kafka's transaction state topic.
const transactionLog = "__transaction_state"

// replication is a topic's (or a default's) replication factor and
// min.insync.replicas; 0 where unknown.
type replication struct {
	rf, minISR int
}

func (r replication) String() string {
	return fmt.Sprintf("replication factor %s, min.insync.replicas %s", countOrUnknown(r.rf), countOrUnknown(r.minISR))
}

func countOrUnknown(n int) string {
	if n == 0 {
		return "unknown"
	}
	return strconv.Itoa(n)
}

// brokerDefaults are the broker settings that decide the replication of
// topics created later.
type brokerDefaults struct {
	topics replication // default.replication.factor, min.insync.replicas
	txnLog replication // transaction.state.log.replication.factor and .min.isr
	err    error       // reading them failed
}

// durability reports, for the topics the router writes to and for the
// transaction state log, whether a broker loss can lose what Kafka
// acknowledged or stop the router: replication factor below 3,
// min.insync.replicas below 2 or not below the replication factor. Each
// finding is a warning: the router works, but not through a broker loss.
func (v *validator) durability(adm *kadm.Client, meta kadm.Metadata) {
	defaults := v.brokerDefaults(adm, meta)
	var all kadm.TopicDetails
	listErr := v.do(func(ctx context.Context) (err error) {
		all, err = adm.ListTopicsWithInternal(ctx)
		return err
	})
	if listErr != nil {
		v.add(warn("replication", "grant the router's Kafka principal DESCRIBE on the topics", "cannot list the topics: %v", listErr))
		return
	}
	configs := v.minISRs(adm, all)
	of := func(topic string) (replication, bool) {
		td, ok := all[topic]
		if !ok || td.Err != nil {
			return replication{}, false
		}
		r := replication{minISR: configs[topic]}
		for _, p := range td.Partitions {
			if r.rf == 0 || len(p.Replicas) < r.rf {
				r.rf = len(p.Replicas)
			}
		}
		return r, true
	}
	brokers := strings.Join(v.cfg.Brokers, ",")
	numBrokers := len(meta.Brokers)

	// Outbox topics: those the template matches, or the defaults they will
	// be created with.
	var outbox []string
	if re, err := route.TopicPattern(v.cfg.TopicTemplate); err == nil {
		outbox = matching(all, re, v.cfg.CheckpointTopic, v.cfg.DeadLetterTopic)
	}
	if len(outbox) == 0 {
		v.add(judgeReplication("replication outbox topics", brokers, "", defaults.topics, numBrokers,
			fmt.Sprintf("no topic matches %s yet; the brokers create them (default.replication.factor, min.insync.replicas) with", v.cfg.TopicTemplate), defaults.err))
	} else {
		v.add(judgeTopics("replication outbox topics", brokers, outbox, of, numBrokers))
	}

	// The checkpoint topic: the router creates it with replication factor
	// min(3, brokers).
	if r, ok := of(v.cfg.CheckpointTopic); ok {
		v.add(judgeReplication("replication checkpoint topic", brokers, v.cfg.CheckpointTopic, r, numBrokers, v.cfg.CheckpointTopic+":", nil))
	} else {
		r := replication{rf: max(1, min(3, numBrokers)), minISR: defaults.topics.minISR}
		v.add(judgeReplication("replication checkpoint topic", brokers, "", r, numBrokers,
			fmt.Sprintf("%s does not exist yet; the router creates it with", v.cfg.CheckpointTopic), defaults.err))
	}

	if v.cfg.DeadLetterTopic != "" {
		if r, ok := of(v.cfg.DeadLetterTopic); ok {
			v.add(judgeReplication("replication dead-letter topic", brokers, v.cfg.DeadLetterTopic, r, numBrokers, v.cfg.DeadLetterTopic+":", nil))
		} else {
			v.add(judgeReplication("replication dead-letter topic", brokers, "", defaults.topics, numBrokers,
				fmt.Sprintf("%s does not exist yet; the brokers create it (default.replication.factor, min.insync.replicas) with", v.cfg.DeadLetterTopic), defaults.err))
		}
	}

	if v.cfg.ExactlyOnce {
		v.add(judgeTxnLog(brokers, defaults, numBrokers, func() (replication, bool) { return of(transactionLog) }))
	}
}

// brokerDefaults reads the settings of the first broker in meta.
func (v *validator) brokerDefaults(adm *kadm.Client, meta kadm.Metadata) brokerDefaults {
	var d brokerDefaults
	if len(meta.Brokers) == 0 {
		d.err = fmt.Errorf("no broker in the metadata")
		return d
	}
	var rc kadm.ResourceConfigs
	d.err = v.do(func(ctx context.Context) (err error) {
		rc, err = adm.DescribeBrokerConfigs(ctx, meta.Brokers[0].NodeID)
		return err
	})
	if d.err == nil && len(rc) > 0 && rc[0].Err != nil {
		d.err = rc[0].Err
	}
	if d.err != nil {
		return d
	}
	for _, c := range rc[0].Configs {
		n, err := strconv.Atoi(c.MaybeValue())
		if err != nil {
			continue
		}
		switch c.Key {
		case "default.replication.factor":
			d.topics.rf = n
		case "min.insync.replicas":
			d.topics.minISR = n
		case "transaction.state.log.replication.factor":
			d.txnLog.rf = n
		case "transaction.state.log.min.isr":
			d.txnLog.minISR = n
		}
	}
	return d
}

// minISRs reads min.insync.replicas of every topic (0 where it cannot be
// read).
func (v *validator) minISRs(adm *kadm.Client, all kadm.TopicDetails) map[string]int {
	out := map[string]int{}
	var names []string
	for name, td := range all {
		if td.Err == nil {
			names = append(names, name)
		}
	}
	var rc kadm.ResourceConfigs
	if err := v.do(func(ctx context.Context) (err error) {
		rc, err = adm.DescribeTopicConfigs(ctx, names...)
		return err
	}); err != nil {
		return out
	}
	for _, r := range rc {
		if r.Err != nil {
			continue
		}
		for _, c := range r.Configs {
			if c.Key == "min.insync.replicas" {
				out[r.Name], _ = strconv.Atoi(c.MaybeValue())
			}
		}
	}
	return out
}

// matching lists the topics re matches, except the router's own.
func matching(all kadm.TopicDetails, re *regexp.Regexp, except ...string) []string {
	var out []string
	for name, td := range all {
		if td.IsInternal || slices.Contains(except, name) || !re.MatchString(name) {
			continue
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// judgeTopics judges each topic and reports them grouped by their
// replication, the worst status first.
func judgeTopics(name, brokers string, topics []string, of func(string) (replication, bool), numBrokers int) Check {
	groups := map[replication][]string{}
	for _, t := range topics {
		r, _ := of(t)
		groups[r] = append(groups[r], t)
	}
	var checks []Check
	for r, ts := range groups {
		checks = append(checks, judgeReplication(name, brokers, ts[0], r, numBrokers, listTopics(ts)+":", nil))
	}
	slices.SortFunc(checks, func(a, b Check) int {
		if c := rank(b.Status) - rank(a.Status); c != 0 {
			return c
		}
		return strings.Compare(a.Detail, b.Detail)
	})
	out := checks[0]
	for _, c := range checks[1:] {
		out.Detail += "; " + c.Detail
	}
	return out
}

func listTopics(ts []string) string {
	if len(ts) > 5 {
		return fmt.Sprintf("%s and %d more", strings.Join(ts[:5], ", "), len(ts)-5)
	}
	return strings.Join(ts, ", ")
}

func rank(s Status) int {
	switch s {
	case Fail:
		return 2
	case Warn:
		return 1
	}
	return 0
}

// judgeReplication judges one replication: what survives the loss of a
// broker with acks=all. Kafka counts min.insync.replicas up to the
// replication factor (a leader with every replica in sync accepts the
// write). topic, when set, is named in the fixes; subject prefixes the
// detail; readErr says why the values are unknown.
func judgeReplication(name, brokers, topic string, r replication, numBrokers int, subject string, readErr error) Check {
	detail := subject + " " + r.String()
	if r.rf == 0 || r.minISR == 0 {
		why := "the brokers did not report them"
		if readErr != nil {
			why = readErr.Error()
		}
		return warn(name, "grant the router's Kafka principal DESCRIBE_CONFIGS on the cluster and the topics, or check by hand: replication factor 3 and min.insync.replicas 2 survive the loss of one broker",
			"%s (%s)", detail, why)
	}
	minISR := min(r.minISR, r.rf)
	if minISR < r.minISR {
		detail += fmt.Sprintf(" (in effect %d: Kafka counts it up to the replication factor)", minISR)
	}
	entity := "--entity-type topics --entity-name " + topic
	if topic == "" {
		entity = "--entity-type brokers --entity-default"
	}
	setISR := func(n int) string {
		return fmt.Sprintf("kafka-configs.sh --bootstrap-server %s --alter %s --add-config min.insync.replicas=%d", brokers, entity, n)
	}
	raiseRF := "raise the replication factor to 3 with kafka-reassign-partitions.sh"
	if topic == "" {
		raiseRF = "set default.replication.factor=3 on the brokers"
	}
	if numBrokers < 3 {
		raiseRF = fmt.Sprintf("run at least 3 brokers (the cluster has %d) and %s", numBrokers, raiseRF)
	}
	switch {
	case r.rf < 3 && minISR < 2:
		return warn(name, raiseRF+", then "+setISR(2),
			"%s: a write is acknowledged once one broker has it, and losing that broker loses it (or, with one replica, stops writes until it is back)", detail)
	case r.rf < 3:
		return warn(name, raiseRF,
			"%s: losing one broker stops writes (NOT_ENOUGH_REPLICAS)", detail)
	case minISR < 2:
		return warn(name, setISR(2),
			"%s: a write is acknowledged once one broker has it, and losing that broker before the others copy it loses it", detail)
	case minISR >= r.rf:
		return warn(name, setISR(r.rf-1),
			"%s: losing one broker stops writes (NOT_ENOUGH_REPLICAS)", detail)
	}
	return ok(name, "%s: survives the loss of one broker", detail)
}

// judgeTxnLog judges the transaction state log: the topic when it exists,
// and the broker settings it is created with.
func judgeTxnLog(brokers string, d brokerDefaults, numBrokers int, topic func() (replication, bool)) Check {
	const name = "replication transaction log"
	settings := fmt.Sprintf("transaction.state.log.replication.factor %s, transaction.state.log.min.isr %s", countOrUnknown(d.txnLog.rf), countOrUnknown(d.txnLog.minISR))
	if d.err != nil {
		settings += fmt.Sprintf(" (%v)", d.err)
	}
	r, exists := topic()
	subject := transactionLog + " does not exist yet; the brokers create it with"
	if !exists {
		r = d.txnLog
	} else {
		subject = transactionLog + ":"
		if r.minISR == 0 {
			r.minISR = d.txnLog.minISR
		}
	}
	c := judgeReplication(name, brokers, "", r, numBrokers, subject, d.err)
	c.Detail += " (broker settings: " + settings + ")"
	if c.Status != OK {
		c.Fix = "set transaction.state.log.replication.factor=3 and transaction.state.log.min.isr=2 on every broker (they apply when the topic is created; for an existing " + transactionLog +
			" raise its replication factor with kafka-reassign-partitions.sh and its min.insync.replicas with kafka-configs.sh)"
		if numBrokers < 3 {
			c.Fix = fmt.Sprintf("run at least 3 brokers (the cluster has %d); ", numBrokers) + c.Fix
		}
	}
	return c
}
