package inbox

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Headers added to a dead-lettered record, after the original headers.
const (
	HeaderOriginalTopic     = "inbox_original_topic"
	HeaderOriginalPartition = "inbox_original_partition"
	HeaderOriginalOffset    = "inbox_original_offset"
	HeaderAttempts          = "inbox_attempts"
	HeaderError             = "inbox_error"
	HeaderConsumer          = "inbox_consumer"
)

// fail handles an event that failed attempts times with err: under Stop
// it stops the consumer; under DeadLetter it produces the record to the
// dead-letter topic. It returns finished when the record may be marked
// handled, halt otherwise.
func (c *Consumer) fail(ctx context.Context, r *kgo.Record, ev Event, attempts int, err error) outcome {
	herr := &HandlerError{EventID: ev.ID, Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Attempts: attempts, Err: err}
	if c.cfg.OnFailure == Stop {
		c.logEvent(c.log.Error(), ev).Err(err).Int("attempts", attempts).Msg("event failed; stopping")
		c.setFatal(herr)
		return halt
	}
	headers := make([]kgo.RecordHeader, 0, len(r.Headers)+6)
	headers = append(headers, r.Headers...)
	headers = append(headers,
		kgo.RecordHeader{Key: HeaderOriginalTopic, Value: []byte(r.Topic)},
		kgo.RecordHeader{Key: HeaderOriginalPartition, Value: []byte(strconv.Itoa(int(r.Partition)))},
		kgo.RecordHeader{Key: HeaderOriginalOffset, Value: []byte(strconv.FormatInt(r.Offset, 10))},
		kgo.RecordHeader{Key: HeaderAttempts, Value: []byte(strconv.Itoa(attempts))},
		kgo.RecordHeader{Key: HeaderError, Value: []byte(err.Error())},
		kgo.RecordHeader{Key: HeaderConsumer, Value: []byte(c.cfg.ConsumerName)},
	)
	dl := &kgo.Record{Topic: c.dlTopic, Key: r.Key, Value: r.Value, Headers: headers, Timestamp: r.Timestamp}
	if perr := c.cl.ProduceSync(ctx, dl).FirstErr(); perr != nil {
		if ctx.Err() != nil {
			return halt
		}
		c.logEvent(c.log.Error(), ev).Err(perr).Str("dead_letter_topic", c.dlTopic).Msg("producing to the dead-letter topic failed; stopping")
		herr.Err = errJoin("dead-lettering to "+c.dlTopic, err, perr)
		c.setFatal(herr)
		return halt
	}
	c.m.incDeadLetter()
	c.logEvent(c.log.Error(), ev).Err(err).Int("attempts", attempts).Str("dead_letter_topic", c.dlTopic).Msg("event dead-lettered")
	return finished
}

// ensureDeadLetterTopic creates the dead-letter topic, with the brokers'
// default partitions and replication factor, if it does not exist. The
// consumer's producer never asks for automatic topic creation, so a
// missing topic would otherwise fail the first dead letter.
func (c *Consumer) ensureDeadLetterTopic(ctx context.Context) error {
	adm := kadm.NewClient(c.cl)
	details, err := adm.ListTopics(ctx, c.dlTopic)
	if err != nil {
		return fmt.Errorf("inbox: looking up dead-letter topic %q: %w", c.dlTopic, err)
	}
	if d, ok := details[c.dlTopic]; ok && d.Err == nil {
		return nil
	} else if ok && !errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
		return fmt.Errorf("inbox: dead-letter topic %q: %w", c.dlTopic, d.Err)
	}
	resp, err := adm.CreateTopic(ctx, -1, -1, nil, c.dlTopic)
	if err == nil {
		err = resp.Err
	}
	switch {
	case err == nil:
		c.log.Info().Str("dead_letter_topic", c.dlTopic).Msg("created the dead-letter topic")
	case !errors.Is(err, kerr.TopicAlreadyExists):
		return fmt.Errorf("inbox: dead-letter topic %q does not exist and creating it failed: %w; create it, grant this client CREATE on it, or set OnFailure to inbox.Stop", c.dlTopic, err)
	}
	return nil
}
