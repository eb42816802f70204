package kafka

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

// LimitSource says which setting bounds a topic's record batches: the one
// an operator raises when a row is too large.
type LimitSource uint8

const (
	FromFlag   LimitSource = iota // --max-message-bytes
	FromTopic                     // the topic's own max.message.bytes
	FromBroker                    // the brokers' message.max.bytes (no topic override, or the topic does not exist yet)
)

// Limit is the largest record batch a topic takes, as franz-go counts it
// (BatchBytes), and where it comes from.
type Limit struct {
	Bytes  int
	Source LimitSource
}

// TopicLimits holds the effective batch limit of every topic the relay has
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
type TopicLimits struct {
	flag       int
	cl         *kgo.Client // the producer's client, for a topic's creation
	adm        *kadm.Client
	autoCreate bool // the router asks the brokers to create missing topics
	log        zerolog.Logger

	local map[string]Limit // the relay goroutine's copy: no lock per record

	mu     sync.Mutex
	shared map[string]int32 // for batchMax, called by franz-go's goroutines

	broker     *Limit // the brokers' message.max.bytes once read
	deniedOnce bool   // a DescribeConfigs denial was logged
}

func newTopicLimits(flag int, autoCreate bool, log zerolog.Logger) *TopicLimits {
	return &TopicLimits{flag: flag, autoCreate: autoCreate, log: log, local: map[string]Limit{}, shared: map[string]int32{}}
}

// setClient sets the client the limits are read with; without one every
// topic's limit is --max-message-bytes.
func (l *TopicLimits) setClient(cl *kgo.Client) {
	l.cl, l.adm = cl, kadm.NewClient(cl)
}

// OpenTopicLimits returns the limits of a session, read with a client of
// their own (DescribeConfigs, and the metadata request that creates a
// missing topic when autoCreate): flag is --max-message-bytes. Close them
// when the session ends.
func OpenTopicLimits(flag int, autoCreate bool, log zerolog.Logger, opts ...kgo.Opt) (*TopicLimits, error) {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	l := newTopicLimits(flag, autoCreate, log)
	l.setClient(cl)
	return l, nil
}

// FlagLimits returns limits that are flag for every topic, without asking
// the brokers.
func FlagLimits(flag int) *TopicLimits { return newTopicLimits(flag, false, zerolog.Nop()) }

// Close closes the client.
func (l *TopicLimits) Close() {
	if l.cl != nil {
		l.cl.Close()
	}
}

// minBatchMax is the least batch limit franz-go accepts.
const minBatchMax = 512

// BatchMax is the producer's per-topic batch limit
// (kgo.ProducerBatchMaxBytesFn): the topic's limit once read, else
// --max-message-bytes.
func (l *TopicLimits) BatchMax(topic string) int32 {
	l.mu.Lock()
	n, ok := l.shared[topic]
	l.mu.Unlock()
	if !ok {
		n = int32(l.flag)
	}
	return max(n, minBatchMax)
}

// Of returns topic's limit, reading it from the brokers the first time.
// Only the relay goroutine calls it. An error means the brokers could not
// be asked (the session ends and the next one asks again); a denied
// DescribeConfigs is not an error: the limit is then --max-message-bytes.
func (l *TopicLimits) Of(ctx context.Context, topic string) (Limit, error) {
	if lim, ok := l.local[topic]; ok {
		return lim, nil
	}
	lim, err := l.read(ctx, topic)
	if err != nil {
		return Limit{}, err
	}
	l.local[topic] = lim
	l.mu.Lock()
	l.shared[topic] = int32(lim.Bytes)
	l.mu.Unlock()
	l.log.Debug().Str("topic", topic).Int("max_batch_bytes", lim.Bytes).Str("from", lim.Source.Setting(topic)).Msg("record batch limit")
	return lim, nil
}

// TooLargeError is a record that cannot fit in a batch of its topic
// alone: it was not produced. Size is its BatchBytes.
type TooLargeError struct {
	Topic string
	Size  int
	Limit Limit
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("record for topic %s takes %d bytes in a record batch, over %s (%d bytes); %s",
		e.Topic, e.Size, e.Limit.Source.Setting(e.Topic), e.Limit.Bytes, e.Limit.Source.Fix(e.Topic, e.Size))
}

// Check returns a *TooLargeError when rec cannot fit in a batch of its
// topic alone, reading the topic's limit first (Of, whose error it
// returns); nil when it fits.
func (l *TopicLimits) Check(ctx context.Context, rec *kgo.Record) error {
	lim, err := l.Of(ctx, rec.Topic)
	if err != nil {
		return err
	}
	if size := BatchBytes(rec); size > lim.Bytes {
		return &TooLargeError{Topic: rec.Topic, Size: size, Limit: lim}
	}
	return nil
}

func (l *TopicLimits) read(ctx context.Context, topic string) (Limit, error) {
	flag := Limit{Bytes: l.flag, Source: FromFlag}
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
			return Limit{}, cerr
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
			return Limit{}, err
		}
		if b == nil {
			return flag, nil
		}
		return smaller(flag, *b), nil
	case err != nil:
		return Limit{}, fmt.Errorf("reading max.message.bytes of topic %s: %w", topic, err)
	}
	topicLimit, ok := topicMaxMessageBytes(rc.Configs)
	if !ok {
		return flag, nil // not reported: trust the flag
	}
	return smaller(flag, topicLimit), nil
}

// describe returns topic's configs; a denial or a missing topic is its
// error.
func (l *TopicLimits) describe(ctx context.Context, topic string) (kadm.ResourceConfig, error) {
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
func (l *TopicLimits) create(ctx context.Context, topic string) error {
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
func topicMaxMessageBytes(configs []kadm.Config) (Limit, bool) {
	var topicValue, brokerEntry *int
	for _, c := range configs {
		n, err := strconv.Atoi(c.MaybeValue())
		if err != nil {
			continue
		}
		switch {
		case c.Key == "max.message.bytes" && c.Source == kmsg.ConfigSourceDynamicTopicConfig:
			return Limit{Bytes: n, Source: FromTopic}, true
		case c.Key == "max.message.bytes":
			topicValue = &n
		case c.Key == "message.max.bytes":
			brokerEntry = &n
		}
	}
	switch {
	case brokerEntry != nil:
		return Limit{Bytes: *brokerEntry, Source: FromBroker}, true
	case topicValue != nil:
		return Limit{Bytes: *topicValue, Source: FromBroker}, true
	}
	return Limit{}, false
}

// brokerLimit reads the smallest message.max.bytes of the brokers (a new
// topic's default); nil when reading it is denied.
func (l *TopicLimits) brokerLimit(ctx context.Context) (*Limit, error) {
	if l.broker != nil {
		return l.broker, nil
	}
	meta, err := l.adm.BrokerMetadata(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the brokers' message.max.Bytes: %w", err)
	}
	rcs, err := l.adm.DescribeBrokerConfigs(ctx, meta.Brokers.NodeIDs()...)
	if denied(err) {
		l.warnDenied("DESCRIBE_CONFIGS on the cluster", err)
		return nil, nil
	}
	if err != nil && len(rcs) == 0 {
		return nil, fmt.Errorf("reading the brokers' message.max.Bytes: %w", err)
	}
	var b *Limit
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
			if n, err := strconv.Atoi(c.MaybeValue()); err == nil && (b == nil || n < b.Bytes) {
				b = &Limit{Bytes: n, Source: FromBroker}
			}
		}
	}
	if b == nil {
		return nil, nil
	}
	l.broker = b
	return b, nil
}

func (l *TopicLimits) warnDenied(acl string, err error) {
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
func smaller(a, b Limit) Limit {
	if b.Bytes < a.Bytes {
		return b
	}
	return a
}

// setting names what to raise for topic's limit.
func (s LimitSource) Setting(topic string) string {
	switch s {
	case FromTopic:
		return fmt.Sprintf("topic %s's max.message.bytes", topic)
	case FromBroker:
		return "the brokers' message.max.bytes"
	}
	return "--max-message-bytes"
}

// fix says how to let a record of size bytes through.
func (s LimitSource) Fix(topic string, size int) string {
	switch s {
	case FromTopic:
		return fmt.Sprintf("raise topic %s's max.message.bytes to at least %d (kafka-configs.sh --alter --entity-type topics --entity-name %s --add-config max.message.bytes=%d) and --max-message-bytes to match, or keep payloads smaller",
			topic, size, topic, size)
	case FromBroker:
		return fmt.Sprintf("raise the brokers' message.max.bytes, or topic %s's max.message.bytes, to at least %d, and --max-message-bytes to match, or keep payloads smaller", topic, size)
	}
	return fmt.Sprintf("raise --max-message-bytes to at least %d (the brokers' message.max.bytes or topic %s's max.message.bytes must allow it too), or keep payloads smaller", size, topic)
}

// recordBatchOverhead is what franz-go counts for a record batch besides
// its records: the batch header and the length of the records array.
const recordBatchOverhead = 4 + 61

// BatchBytes is the size franz-go gives a batch holding rec alone, the
// size it compares with the topic's batch limit (the brokers count 4 bytes
// less).
func BatchBytes(rec *kgo.Record) int {
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
