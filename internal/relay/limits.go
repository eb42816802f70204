package relay

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// limitSource says which setting bounds a topic's record batches: the one
// an operator raises when a row is too large.
type limitSource uint8

const (
	fromFlag   limitSource = iota // --max-message-bytes
	fromTopic                     // the topic's own max.message.bytes
	fromBroker                    // the brokers' message.max.bytes (no topic override, or the topic does not exist yet)
)

// limit is the largest record batch a topic takes, as franz-go counts it
// (batchBytes), and where it comes from.
type limit struct {
	bytes  int
	source limitSource
}

// topicLimits holds the effective batch limit of every topic the relay has
// produced to in this session: the smaller of --max-message-bytes and the
// topic's max.message.bytes (which defaults to the brokers'
// message.max.bytes). A topic's limit is read with DescribeConfigs before
// the first record for it is produced, so the producer's batches for the
// topic (ProducerBatchMaxBytesFn, consulted when franz-go first learns the
// topic's partitions) never exceed it, and a record that cannot fit alone
// is a row error instead of a MESSAGE_TOO_LARGE for a whole batch.
//
// A topic that does not exist yet is created first when auto-creation is
// on (the metadata request the producer would send), so that its own
// limit is read with the ACLs the router needs anyway (CREATE and
// DESCRIBE_CONFIGS on the topic); otherwise the brokers' message.max.bytes
// is read (DESCRIBE_CONFIGS on the cluster).
//
// A limit changed on the brokers while the router runs is read at the next
// session (a restart, or a new session after a Kafka error).
type topicLimits struct {
	flag       int
	cl         *kgo.Client // the producer's client, for a topic's creation
	adm        *kadm.Client
	autoCreate bool // the router asks the brokers to create missing topics
	log        zerolog.Logger

	local map[string]limit // the relay goroutine's copy: no lock per record

	mu     sync.Mutex
	shared map[string]int32 // for batchMax, called by franz-go's goroutines

	broker     *limit // the brokers' message.max.bytes once read
	deniedOnce bool   // a DescribeConfigs denial was logged
}

func newTopicLimits(flag int, autoCreate bool, log zerolog.Logger) *topicLimits {
	return &topicLimits{flag: flag, autoCreate: autoCreate, log: log, local: map[string]limit{}, shared: map[string]int32{}}
}

// setClient sets the client the limits are read with; without one every
// topic's limit is --max-message-bytes.
func (l *topicLimits) setClient(cl *kgo.Client) {
	l.cl, l.adm = cl, kadm.NewClient(cl)
}

// close closes the client.
func (l *topicLimits) close() {
	if l.cl != nil {
		l.cl.Close()
	}
}

// minBatchMax is the least batch limit franz-go accepts.
const minBatchMax = 512

// batchMax is the producer's per-topic batch limit
// (kgo.ProducerBatchMaxBytesFn): the topic's limit once read, else
// --max-message-bytes.
func (l *topicLimits) batchMax(topic string) int32 {
	l.mu.Lock()
	n, ok := l.shared[topic]
	l.mu.Unlock()
	if !ok {
		n = int32(l.flag)
	}
	return max(n, minBatchMax)
}

// of returns topic's limit, reading it from the brokers the first time.
// Only the relay goroutine calls it. An error means the brokers could not
// be asked (the session ends and the next one asks again); a denied
// DescribeConfigs is not an error: the limit is then --max-message-bytes.
func (l *topicLimits) of(ctx context.Context, topic string) (limit, error) {
	if lim, ok := l.local[topic]; ok {
		return lim, nil
	}
	lim, err := l.read(ctx, topic)
	if err != nil {
		return limit{}, err
	}
	l.local[topic] = lim
	l.mu.Lock()
	l.shared[topic] = int32(lim.bytes)
	l.mu.Unlock()
	l.log.Debug().Str("topic", topic).Int("max_batch_bytes", lim.bytes).Str("from", lim.source.setting(topic)).Msg("record batch limit")
	return lim, nil
}

func (l *topicLimits) read(ctx context.Context, topic string) (limit, error) {
	flag := limit{bytes: l.flag, source: fromFlag}
	if l.adm == nil {
		return flag, nil
	}
	rc, err := l.describe(ctx, topic)
	if errors.Is(err, kerr.UnknownTopicOrPartition) && l.autoCreate {
		cerr := l.create(ctx, topic)
		switch {
		case denied(cerr):
			return flag, nil // producing to it fails too, and names the ACL
		case cerr == nil:
			rc, err = l.describe(ctx, topic)
		case !errors.Is(cerr, kerr.UnknownTopicOrPartition):
			return limit{}, cerr
		}
	}
	switch {
	case denied(err):
		l.warnDenied(fmt.Sprintf("DESCRIBE_CONFIGS on topic %s", topic), err)
		return flag, nil
	case errors.Is(err, kerr.UnknownTopicOrPartition):
		// Not created (auto-creation off, or not allowed): producing to it
		// fails and says so; a topic created meanwhile has the brokers'
		// default.
		b, err := l.brokerLimit(ctx)
		if err != nil {
			return limit{}, err
		}
		if b == nil {
			return flag, nil
		}
		return smaller(flag, *b), nil
	case err != nil:
		return limit{}, fmt.Errorf("reading max.message.bytes of topic %s: %w", topic, err)
	}
	topicLimit, ok := topicMaxMessageBytes(rc.Configs)
	if !ok {
		return flag, nil // not reported: trust the flag
	}
	return smaller(flag, topicLimit), nil
}

// describe returns topic's configs; a denial or a missing topic is its
// error.
func (l *topicLimits) describe(ctx context.Context, topic string) (kadm.ResourceConfig, error) {
	rcs, err := l.adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return kadm.ResourceConfig{}, err // kadm returns a denial as the request's error
	}
	rc, err := rcs.On(topic, nil)
	if err != nil {
		return rc, err
	}
	return rc, rc.Err
}

// createWait bounds how long a topic created by auto-creation may take to
// be described; a topic the brokers do not create is known after it.
const createWait = 5 * time.Second

// create asks the brokers to create topic by auto-creation, as the
// producer's first metadata request for it would, and waits until it can
// be described. It returns UNKNOWN_TOPIC_OR_PARTITION when the brokers do
// not create it, and the denial when creating it is not allowed.
func (l *topicLimits) create(ctx context.Context, topic string) error {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	req.AllowAutoTopicCreation = true
	resp, err := req.RequestWith(ctx, l.cl)
	if err != nil {
		return fmt.Errorf("creating topic %s: %w", topic, err)
	}
	for _, t := range resp.Topics {
		// Apache Kafka answers UNKNOWN_TOPIC_OR_PARTITION both when it does
		// not create topics and while it creates this one: only waiting
		// tells them apart.
		if err := kerr.ErrorForCode(t.ErrorCode); t.Topic != nil && *t.Topic == topic && denied(err) {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, createWait)
	defer cancel()
	for {
		_, err := l.describe(ctx, topic)
		if !errors.Is(err, kerr.UnknownTopicOrPartition) {
			return nil // described, or an error describe reports again
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// topicMaxMessageBytes reads a topic's max.message.bytes from its
// DescribeConfigs answer: its own override, else the brokers' setting.
// Without an override Apache Kafka reports the brokers' message.max.bytes
// there; kfake reports its built-in default there and the brokers' setting
// as a separate message.max.bytes entry, which it enforces when present.
func topicMaxMessageBytes(configs []kadm.Config) (limit, bool) {
	var topicValue, brokerEntry *int
	for _, c := range configs {
		n, err := strconv.Atoi(c.MaybeValue())
		if err != nil {
			continue
		}
		switch {
		case c.Key == "max.message.bytes" && c.Source == kmsg.ConfigSourceDynamicTopicConfig:
			return limit{bytes: n, source: fromTopic}, true
		case c.Key == "max.message.bytes":
			topicValue = &n
		case c.Key == "message.max.bytes":
			brokerEntry = &n
		}
	}
	switch {
	case brokerEntry != nil:
		return limit{bytes: *brokerEntry, source: fromBroker}, true
	case topicValue != nil:
		return limit{bytes: *topicValue, source: fromBroker}, true
	}
	return limit{}, false
}

// brokerLimit reads the smallest message.max.bytes of the brokers (a new
// topic's default); nil when reading it is denied.
func (l *topicLimits) brokerLimit(ctx context.Context) (*limit, error) {
	if l.broker != nil {
		return l.broker, nil
	}
	meta, err := l.adm.BrokerMetadata(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the brokers' message.max.bytes: %w", err)
	}
	rcs, err := l.adm.DescribeBrokerConfigs(ctx, meta.Brokers.NodeIDs()...)
	if denied(err) {
		l.warnDenied("DESCRIBE_CONFIGS on the cluster", err)
		return nil, nil
	}
	if err != nil && len(rcs) == 0 {
		return nil, fmt.Errorf("reading the brokers' message.max.bytes: %w", err)
	}
	var b *limit
	for _, rc := range rcs {
		if denied(rc.Err) {
			l.warnDenied("DESCRIBE_CONFIGS on the cluster", rc.Err)
			return nil, nil
		}
		if rc.Err != nil {
			return nil, fmt.Errorf("reading message.max.bytes of broker %s: %w", rc.Name, rc.Err)
		}
		for _, c := range rc.Configs {
			if c.Key != "message.max.bytes" {
				continue
			}
			if n, err := strconv.Atoi(c.MaybeValue()); err == nil && (b == nil || n < b.bytes) {
				b = &limit{bytes: n, source: fromBroker}
			}
		}
	}
	if b == nil {
		return nil, nil
	}
	l.broker = b
	return b, nil
}

func (l *topicLimits) warnDenied(acl string, err error) {
	if l.deniedOnce {
		return
	}
	l.deniedOnce = true
	l.log.Warn().Err(err).Int("max_message_bytes", l.flag).
		Msgf("cannot read the brokers' message size limits (grant the router's principal %s): assuming --max-message-bytes fits every topic; a record batch over a smaller topic limit stops the router with MESSAGE_TOO_LARGE", acl)
}

func denied(err error) bool {
	return errors.Is(err, kerr.TopicAuthorizationFailed) || errors.Is(err, kerr.ClusterAuthorizationFailed)
}

// smaller returns the tighter limit; on a tie the flag, which the router
// controls.
func smaller(a, b limit) limit {
	if b.bytes < a.bytes {
		return b
	}
	return a
}

// setting names what to raise for topic's limit.
func (s limitSource) setting(topic string) string {
	switch s {
	case fromTopic:
		return fmt.Sprintf("topic %s's max.message.bytes", topic)
	case fromBroker:
		return "the brokers' message.max.bytes"
	}
	return "--max-message-bytes"
}

// fix says how to let a record of size bytes through.
func (s limitSource) fix(topic string, size int) string {
	switch s {
	case fromTopic:
		return fmt.Sprintf("raise topic %s's max.message.bytes to at least %d (kafka-configs.sh --alter --entity-type topics --entity-name %s --add-config max.message.bytes=%d) and --max-message-bytes to match, or keep payloads smaller",
			topic, size, topic, size)
	case fromBroker:
		return fmt.Sprintf("raise the brokers' message.max.bytes, or topic %s's max.message.bytes, to at least %d, and --max-message-bytes to match, or keep payloads smaller", topic, size)
	}
	return fmt.Sprintf("raise --max-message-bytes to at least %d (the brokers' message.max.bytes or topic %s's max.message.bytes must allow it too), or keep payloads smaller", size, topic)
}

// recordBatchOverhead is what franz-go counts for a record batch besides
// its records: the batch header and the length of the records array.
const recordBatchOverhead = 4 + 61

// batchBytes is the size franz-go gives a batch holding rec alone, the
// size it compares with the topic's batch limit (the brokers count 4 bytes
// less).
func batchBytes(rec *kgo.Record) int {
	l := 1 + // attributes
		1 + // timestamp delta: 0 for a batch's first record
		1 + // offset delta: 0
		kbin.VarintLen(int32(len(rec.Key))) + len(rec.Key) +
		kbin.VarintLen(int32(len(rec.Value))) + len(rec.Value) +
		kbin.VarintLen(int32(len(rec.Headers)))
	for _, h := range rec.Headers {
		l += kbin.VarintLen(int32(len(h.Key))) + len(h.Key) + kbin.VarintLen(int32(len(h.Value))) + len(h.Value)
	}
	return recordBatchOverhead + kbin.VarintLen(int32(l)) + l
}
