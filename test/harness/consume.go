package harness

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Consumer reads topics from their start with read_committed isolation,
// like a downstream service that wants each outbox event once. It looks
// for new topics matching its regex every few hundred milliseconds.
type Consumer struct {
	t  testing.TB
	cl *kgo.Client
}

// NewConsumer reads the topics matching TopicRegex; opts add client
// options (SASL, TLS). The client is closed when the test ends.
func NewConsumer(t testing.TB, brokers []string, topicRegex string, opts ...kgo.Opt) *Consumer {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(brokers...),
		kgo.ConsumeRegex(),
		kgo.ConsumeTopics(topicRegex),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.MetadataMinAge(100 * time.Millisecond),
		kgo.MetadataMaxAge(300 * time.Millisecond),
		kgo.FetchMaxWait(100 * time.Millisecond),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &Consumer{t: t, cl: cl}
}

// Read polls until n records arrived (more may arrive in the last poll) or
// the deadline passes, which fails the test.
func (c *Consumer) Read(n int, timeout time.Duration) []*kgo.Record {
	c.t.Helper()
	recs, err := c.ReadUntil(func(got []*kgo.Record) bool { return len(got) >= n }, timeout)
	if err != nil {
		c.t.Fatalf("read %d of %d records: %v", len(recs), n, err)
	}
	return recs
}

// ReadUntil polls until done(records so far) or the timeout, and returns
// the records read; the error says the timeout passed.
func (c *Consumer) ReadUntil(done func([]*kgo.Record) bool, timeout time.Duration) ([]*kgo.Record, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var out []*kgo.Record
	for !done(out) {
		fs := c.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return out, fmt.Errorf("timed out after %s", timeout)
		}
		for _, e := range fs.Errors() {
			if e.Err != context.DeadlineExceeded {
				c.t.Logf("fetch error %s/%d: %v", e.Topic, e.Partition, e.Err)
			}
		}
		out = append(out, fs.Records()...)
	}
	return out, nil
}

// Quiet keeps reading for d and returns anything that arrives: used to
// show that nothing more (no duplicate) comes.
func (c *Consumer) Quiet(d time.Duration) []*kgo.Record {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var out []*kgo.Record
	for ctx.Err() == nil {
		fs := c.cl.PollFetches(ctx)
		out = append(out, fs.Records()...)
	}
	return out
}

// Header is the value of r's header key, and whether it has one.
func Header(r *kgo.Record, key string) (string, bool) {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value), true
		}
	}
	return "", false
}

// RecordHeader is the value of r's header key, "" if it has none.
func RecordHeader(r *kgo.Record, key string) string {
	v, _ := Header(r, key)
	return v
}

// RecordIDs are the "id" headers of recs, in order ("" for a record without one).
func RecordIDs(recs []*kgo.Record) []string {
	out := make([]string, 0, len(recs))
	for _, r := range recs {
		id, _ := Header(r, "id")
		out = append(out, id)
	}
	return out
}

// ReadIDsUntil polls until done(event ids so far) and returns the event
// ids read; the timeout passing fails the test.
func (c *Consumer) ReadIDsUntil(done func(ids []string) bool, timeout time.Duration) []string {
	c.t.Helper()
	recs, err := c.ReadUntil(func(got []*kgo.Record) bool { return done(RecordIDs(got)) }, timeout)
	if err != nil {
		c.t.Fatalf("read %d records: %v", len(recs), err)
	}
	return RecordIDs(recs)
}

// ExactTopic is the consumer regex of the one topic named topic.
func ExactTopic(topic string) string { return "^" + regexp.QuoteMeta(topic) + "$" }
