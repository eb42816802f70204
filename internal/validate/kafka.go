package validate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/kafka"
)

// kafkaFacts is what the Kafka checks found, for the checks that combine
// it with the server's.
type kafkaFacts struct {
	// checkpoint is the stored checkpoint; nil when none is stored or it
	// could not be read (known says which).
	checkpoint *checkpoint.Checkpoint
	known      bool
}

// kafka runs the Kafka checks. It returns nil when the cluster cannot be
// reached.
func (v *validator) kafka(m *mysqlFacts) *kafkaFacts {
	brokers := strings.Join(v.cfg.Brokers, ",")
	if v.cfg.KafkaAuth != nil {
		if err := v.do(v.cfg.KafkaAuth); err != nil {
			v.add(fail("kafka", "correct the setting the error names (--kafka-sasl-*, --kafka-tls*)", "%v (the other Kafka checks were skipped)", err))
			return nil
		}
	}
	cl, err := kafka.NewClient(v.cfg.Kafka...)
	if err != nil {
		v.add(fail("kafka", "correct the Kafka connection settings", "%v (the other Kafka checks were skipped)", err))
		return nil
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)

	var meta kadm.Metadata
	if err := v.do(func(ctx context.Context) (err error) {
		meta, err = adm.BrokerMetadata(ctx)
		return err
	}); err != nil {
		v.add(fail("kafka", "check --kafka-brokers (host:port of the bootstrap listeners), that the brokers run and are reachable from here, and the --kafka-tls*/--kafka-sasl-* settings",
			"cannot reach the brokers %s: %v (the other Kafka checks were skipped)", brokers, err))
		return nil
	}
	v.add(checkCluster(meta))
	numBrokers := len(meta.Brokers)

	topic := v.cfg.CheckpointTopic
	var td kadm.TopicDetail
	var exists bool
	topicErr := v.do(func(ctx context.Context) error {
		details, err := adm.ListTopics(ctx, topic)
		if err != nil {
			return err
		}
		d, ok := details[topic]
		switch {
		case !ok, errors.Is(d.Err, kerr.UnknownTopicOrPartition):
			return nil
		case d.Err != nil:
			return d.Err
		}
		td, exists = d, true
		return nil
	})
	var policy string
	var policyErr error
	if topicErr == nil && exists {
		policyErr = v.do(func(ctx context.Context) (err error) {
			policy, err = topicPolicy(ctx, adm, topic)
			return err
		})
	}
	v.add(checkTopic(topicInput{topic: topic, brokers: brokers, numBrokers: numBrokers, err: topicErr,
		exists: exists, detail: td, policy: policy, policyErr: policyErr}))

	v.add(v.transactions(cl, adm, numBrokers))
	v.durability(adm, meta)
	v.add(v.limits(adm, meta.Brokers.NodeIDs()))

	k := &kafkaFacts{}
	var flavor gtid.Flavor
	if m != nil {
		flavor = m.server.Flavor
	}
	if topicErr != nil {
		v.add(warn("checkpoint", "see the checkpoint topic check", "not read: the checkpoint topic %s cannot be described", topic))
		return k
	}
	if !exists {
		k.known = true
		v.add(ok("checkpoint", "none (topic %s does not exist yet); the router starts at --start %s", topic, v.cfg.Start))
		return k
	}
	var cp *checkpoint.Checkpoint
	loadErr := v.do(func(ctx context.Context) (err error) {
		cp, err = kafka.LoadCheckpoint(ctx, topic, v.cfg.Name, v.cfg.Kafka...)
		return err
	})
	c := checkCheckpoint(checkpointInput{name: v.cfg.Name, topic: topic, start: v.cfg.Start, cp: cp, err: loadErr,
		flavor: flavor, now: v.cfg.Now()})
	v.add(c)
	if c.Status != Fail && (loadErr == nil || errors.Is(loadErr, checkpoint.ErrCheckpointMissing)) {
		k.checkpoint, k.known = cp, true
	}
	return k
}

// checkCluster reports the cluster id and brokers.
func checkCluster(meta kadm.Metadata) Check {
	var list []string
	for _, b := range meta.Brokers {
		list = append(list, fmt.Sprintf("%d %s:%d", b.NodeID, b.Host, b.Port))
	}
	cluster := meta.Cluster
	if cluster == "" {
		cluster = "(no id)"
	}
	return ok("kafka", "cluster %s, %d broker(s): %s; controller %d", cluster, len(meta.Brokers), strings.Join(list, ", "), meta.Controller)
}

// topicPolicy returns the topic's cleanup.policy ("" if not reported).
func topicPolicy(ctx context.Context, adm *kadm.Client, topic string) (string, error) {
	rc, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return "", err
	}
	r, err := rc.On(topic, nil)
	if err != nil {
		return "", err
	}
	if r.Err != nil {
		return "", r.Err
	}
	for _, c := range r.Configs {
		if c.Key == "cleanup.policy" {
			return c.MaybeValue(), nil
		}
	}
	return "", nil
}

// topicInput is what checkTopic judges.
type topicInput struct {
	topic      string
	brokers    string // seed brokers, for the fix
	numBrokers int
	err        error // describing the topic failed
	exists     bool
	detail     kadm.TopicDetail
	policy     string // cleanup.policy; "" when not reported
	policyErr  error
}

// checkTopic judges the checkpoint topic: compacted, one partition.
func checkTopic(in topicInput) Check {
	name := "checkpoint topic"
	if in.err != nil {
		return fail(name, fmt.Sprintf("grant the router's Kafka principal DESCRIBE, READ and WRITE on topic %s (and CREATE, unless you create it)", in.topic),
			"cannot describe %s: %v", in.topic, in.err)
	}
	if !in.exists {
		return ok(name, "%s does not exist yet; the router creates it (cleanup.policy=compact, 1 partition, replication factor %d), which needs CREATE on the cluster or the topic",
			in.topic, max(1, min(3, in.numBrokers)))
	}
	partitions := len(in.detail.Partitions)
	rf := 0
	if p, ok := in.detail.Partitions[0]; ok {
		rf = len(p.Replicas)
	}
	alter := fmt.Sprintf("kafka-configs.sh --bootstrap-server %s --alter --entity-type topics --entity-name %s --add-config cleanup.policy=compact", in.brokers, in.topic)
	recreate := fmt.Sprintf("the partition count cannot be lowered: create a topic with 1 partition and cleanup.policy=compact (kafka-topics.sh --bootstrap-server %s --create --topic %s.v2 --partitions 1 --config cleanup.policy=compact), copy the checkpoint record into it and set --checkpoint-topic %s.v2", in.brokers, in.topic, in.topic)
	var policies []string
	for _, p := range strings.Split(in.policy, ",") {
		policies = append(policies, strings.ToLower(strings.TrimSpace(p)))
	}
	switch {
	case partitions != 1:
		return fail(name, recreate, "%s has %d partitions: the checkpoint must live in exactly one (partition 0)", in.topic, partitions)
	case in.policyErr != nil:
		return warn(name, fmt.Sprintf("grant DESCRIBE_CONFIGS on topic %s, or check by hand that it has cleanup.policy=compact", in.topic),
			"%s: 1 partition, replication factor %d; cannot read its cleanup.policy: %v", in.topic, rf, in.policyErr)
	case in.policy == "":
		return warn(name, "check by hand that it has cleanup.policy=compact: "+alter,
			"%s: 1 partition, replication factor %d; the brokers did not report its cleanup.policy", in.topic, rf)
	case slices.Contains(policies, "delete") || !slices.Contains(policies, "compact"):
		return fail(name, alter, "%s has cleanup.policy=%s: the checkpoint would be deleted after the topic's retention, and the router would then start over from --start", in.topic, in.policy)
	case rf < min(3, in.numBrokers):
		return warn(name, fmt.Sprintf("raise its replication factor to %d with kafka-reassign-partitions.sh", min(3, in.numBrokers)),
			"%s: cleanup.policy=compact, 1 partition, but replication factor %d on %d brokers: losing one broker can lose the checkpoint", in.topic, rf, in.numBrokers)
	}
	return ok(name, "%s: cleanup.policy=compact, 1 partition, replication factor %d", in.topic, rf)
}

// Request keys a transactional producer needs.
var txnKeys = []struct {
	key  int16
	name string
}{
	{kmsg.InitProducerID.Int16(), "InitProducerID"},
	{kmsg.AddPartitionsToTxn.Int16(), "AddPartitionsToTxn"},
	{kmsg.EndTxn.Int16(), "EndTxn"},
}

// transactions checks that the brokers support transactions and that a
// transactional producer can be initialised, with a throwaway
// transactional id so that a running router is not fenced.
func (v *validator) transactions(cl *kgo.Client, adm *kadm.Client, numBrokers int) Check {
	const name = "kafka transactions"
	if !v.cfg.ExactlyOnce {
		return ok(name, "not used with --delivery at-least-once")
	}
	var versions kadm.BrokersApiVersions
	if err := v.do(func(ctx context.Context) (err error) {
		versions, err = adm.ApiVersions(ctx)
		return err
	}); err != nil {
		return fail(name, "check that every broker is reachable", "cannot read the brokers' API versions: %v", err)
	}
	if c, bad := checkTxnAPIs(versions); bad {
		return c
	}
	id := throwawayTxnID()
	err := v.do(func(ctx context.Context) error {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID = &id
		req.TransactionTimeoutMillis = int32(v.cfg.Timeout / time.Millisecond)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		return kerr.ErrorForCode(resp.ErrorCode)
	})
	return judgeTxnInit(id, err, numBrokers)
}

// checkTxnAPIs fails when a broker lacks a transactional request.
func checkTxnAPIs(versions kadm.BrokersApiVersions) (Check, bool) {
	for _, b := range versions.Sorted() {
		if b.Err != nil {
			return fail("kafka transactions", "check that every broker is reachable",
				"cannot read the API versions of broker %d: %v", b.NodeID, b.Err), true
		}
		var missing []string
		for _, k := range txnKeys {
			if _, _, exists := b.KeyVersions(k.key); !exists {
				missing = append(missing, k.name)
			}
		}
		if len(missing) > 0 {
			return fail("kafka transactions", "upgrade the brokers to Kafka 0.11 or newer (or a compatible broker with transactions), or use --delivery at-least-once",
				"broker %d does not support transactions (no %s)", b.NodeID, strings.Join(missing, ", ")), true
		}
	}
	return Check{}, false
}

// judgeTxnInit turns the outcome of InitProducerID into the check.
func judgeTxnInit(id string, err error, numBrokers int) Check {
	const name = "kafka transactions"
	switch {
	case errors.Is(err, kerr.TransactionalIDAuthorizationFailed):
		return warn(name, "grant the router's Kafka principal WRITE and DESCRIBE on transactional id binlog-router-<name> (a prefixed ACL on binlog-router- also covers validate's own)",
			"supported by the brokers, but initialising a producer with the throwaway transactional id %s was denied, so the router's own could not be checked", id)
	case errors.Is(err, kerr.ClusterAuthorizationFailed):
		return fail(name, "grant the router's Kafka principal IDEMPOTENT_WRITE on the cluster (needed by Kafka before 3.0) and WRITE on transactional id binlog-router-<name>",
			"initialising a transactional producer was denied: %v", err)
	case err != nil:
		return fail(name, "check the brokers' transaction.state.log.replication.factor (default 3) and transaction.state.log.min.isr (default 2): the cluster must have at least that many live brokers to create __transaction_state; or use --delivery at-least-once",
			"the brokers support transactions, but initialising a transactional producer (throwaway id %s) failed: %v", id, err)
	}
	detail := fmt.Sprintf("supported: a transactional producer with the throwaway id %s was initialised", id)
	if numBrokers < 3 {
		return warn(name, "run at least 3 brokers in production, with transaction.state.log.replication.factor=3 and transaction.state.log.min.isr=2",
			"%s, but the cluster has %d broker(s): transaction.state.log.replication.factor (default 3) cannot be met, so the transaction log is not replicated and losing a broker stops exactly-once delivery", detail, numBrokers)
	}
	return ok(name, "%s", detail)
}

// throwawayTxnID is a transactional id no router uses: routers use
// binlog-router-<name>, validate uses binlog-router-validate-<random>.
// The broker forgets it after transactional.id.expiration.ms (default 7
// days).
func throwawayTxnID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "binlog-router-validate-" + hex.EncodeToString(b)
}

// checkpointInput is what checkCheckpoint judges.
type checkpointInput struct {
	name, topic, start string
	cp                 *checkpoint.Checkpoint
	err                error
	flavor             gtid.Flavor // the server's; "" when unknown
	now                time.Time
}

// checkCheckpoint reports the stored checkpoint.
func checkCheckpoint(in checkpointInput) Check {
	const name = "checkpoint"
	switch {
	case errors.Is(in.err, checkpoint.ErrCheckpointMissing):
		return ok(name, "none stored for --name %s in %s; the router starts at --start %s", in.name, in.topic, in.start)
	case in.err != nil:
		return fail(name, fmt.Sprintf("grant the router's Kafka principal READ on topic %s; if the stored value is corrupt, binlog-router checkpoint reset --name %s", in.topic, in.name),
			"cannot read the checkpoint of --name %s from %s: %v", in.name, in.topic, in.err)
	}
	cp := in.cp
	age := in.now.Sub(cp.Time).Round(time.Second)
	detail := fmt.Sprintf("[%s] written %s (%s ago) for a %s server (server_id %d)", cp.GTIDSet, cp.Time.UTC().Format(time.RFC3339), age, cp.Flavor, cp.ServerID)
	if in.flavor != "" && gtid.Flavor(cp.Flavor) != in.flavor {
		return fail(name, fmt.Sprintf("point --mysql-addr at the server the checkpoint was written for, or use another --name for this server (binlog-router checkpoint reset --name %s drops the stored one)", in.name),
			"%s, but the server is %s", detail, in.flavor)
	}
	if in.flavor != "" {
		if _, err := gtid.Parse(in.flavor, cp.GTIDSet); err != nil {
			return fail(name, fmt.Sprintf("binlog-router checkpoint set --name %s --gtid <set> with a valid set, or checkpoint reset", in.name), "%s: %v", detail, err)
		}
	}
	return ok(name, "%s", detail)
}
