package inbox

import (
	"context"
	"strconv"

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
// dead-letter topic. It returns true when the record may be marked done.
func (c *Consumer) fail(ctx context.Context, r *kgo.Record, ev Event, attempts int, err error) bool {
	herr := &HandlerError{EventID: ev.ID, Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Attempts: attempts, Err: err}
	if c.cfg.OnFailure == Stop {
		c.logEvent(c.log.Error(), ev).Err(err).Int("attempts", attempts).Msg("event failed; stopping")
		c.setFatal(herr)
		return false
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
			return false
		}
		c.logEvent(c.log.Error(), ev).Err(perr).Str("dead_letter_topic", c.dlTopic).Msg("producing to the dead-letter topic failed; stopping")
		c.setFatal(&HandlerError{EventID: ev.ID, Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Attempts: attempts,
			Err: errJoin("dead-lettering", err, perr)})
		return false
	}
	c.m.incDeadLetter()
	c.logEvent(c.log.Error(), ev).Err(err).Int("attempts", attempts).Str("dead_letter_topic", c.dlTopic).Msg("event dead-lettered")
	return true
}
