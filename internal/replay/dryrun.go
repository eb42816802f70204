package replay

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/pipeline"
	"github.com/binlog-router/binlog-router/internal/route"
)

// Line is one record of a dry run, written as one line of JSON.
type Line struct {
	Topic string `json:"topic"`
	// Partition is route.PartitionFor(key, partitions of the topic), the
	// partition a real replay would write to; null when the topic does
	// not exist (it would be created with the brokers' default count).
	Partition *int `json:"partition"`
	// Key, header values and Value are the bytes as text; invalid UTF-8
	// is replaced by U+FFFD.
	Key     string   `json:"key"`
	Headers []Header `json:"headers"` // in record order; names may repeat
	Value   *string  `json:"value"`   // null for a tombstone (NULL payload)
	// Timestamp is the record timestamp (created_at, else the commit
	// time) in milliseconds, as Kafka stores it.
	Timestamp time.Time `json:"timestamp"`
}

// Header is one record header of a Line.
type Header struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// NewLine describes rec; partitions is the topic's partition count, 0 when
// the topic does not exist.
func NewLine(rec *kgo.Record, partitions int) Line {
	l := Line{Topic: rec.Topic, Key: string(rec.Key), Headers: make([]Header, 0, len(rec.Headers)),
		Timestamp: rec.Timestamp.Truncate(time.Millisecond)}
	if partitions > 0 {
		p := route.PartitionFor(rec.Key, partitions)
		l.Partition = &p
	}
	for _, h := range rec.Headers {
		l.Headers = append(l.Headers, Header{Key: h.Key, Value: string(h.Value)})
	}
	if rec.Value != nil {
		v := string(rec.Value)
		l.Value = &v
	}
	return l
}

// printer is the sink of a dry run: it writes each record as a Line and
// produces nothing. Its limits are the topics' as the real replay's
// session reads them, so a record too large for its topic fails (or is
// dead-lettered) in a dry run as it would for real. Commit flushes the
// lines; Abort leaves the lines already written.
type printer struct {
	adm        *kadm.Client
	limits     *kafka.TopicLimits
	w          *bufio.Writer
	enc        *json.Encoder
	partitions map[string]int // topic -> partition count, 0 = no such topic
}

var _ pipeline.Sink = (*printer)(nil)

func newPrinter(cfg *Config, out io.Writer) (*printer, error) {
	// No kgo.AllowAutoTopicCreation: looking at a topic must not create it.
	adm, err := kafka.NewAdmin(cfg.Kafka...)
	if err != nil {
		return nil, err
	}
	limits, err := kafka.OpenTopicLimits(cfg.MaxMessageBytes, false, cfg.Logger, cfg.Kafka...)
	if err != nil {
		adm.Close()
		return nil, err
	}
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &printer{adm: adm, limits: limits, w: w, enc: enc, partitions: map[string]int{}}, nil
}

// Open does nothing: a dry run has no producer and no checkpoint.
func (p *printer) Open(context.Context) (*checkpoint.Checkpoint, error) { return nil, nil }

// Produce writes rec's Line, or returns a *kafka.TooLargeError when rec
// would not fit in a batch of its topic (the topic's limit is read from
// the brokers the first time).
func (p *printer) Produce(ctx context.Context, rec *kgo.Record) error {
	if err := p.limits.Check(ctx, rec); err != nil {
		return err
	}
	n, ok := p.partitions[rec.Topic]
	if !ok {
		var err error
		if n, err = p.partitionCount(ctx, rec.Topic); err != nil {
			return err
		}
		p.partitions[rec.Topic] = n
	}
	if err := p.enc.Encode(NewLine(rec, n)); err != nil {
		return fmt.Errorf("writing dry-run line: %w", err)
	}
	return nil
}

func (p *printer) partitionCount(ctx context.Context, topic string) (int, error) {
	details, err := p.adm.ListTopics(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("reading metadata of topic %q: %w", topic, err)
	}
	d, ok := details[topic]
	switch {
	case !ok, errors.Is(d.Err, kerr.UnknownTopicOrPartition):
		return 0, nil
	case d.Err != nil:
		return 0, fmt.Errorf("reading metadata of topic %q: %w", topic, d.Err)
	}
	return len(d.Partitions), nil
}

// Commit flushes the lines written; it writes no checkpoint.
func (p *printer) Commit(context.Context, *checkpoint.Checkpoint) error {
	if err := p.w.Flush(); err != nil {
		return fmt.Errorf("writing dry-run lines: %w", err)
	}
	return nil
}

// Abort flushes too: lines already printed stay printed.
func (p *printer) Abort(context.Context, error) { _ = p.w.Flush() }

// Close releases the clients.
func (p *printer) Close(context.Context) error {
	if p.adm != nil {
		p.adm.Close()
		p.limits.Close()
		p.adm = nil
	}
	return nil
}
