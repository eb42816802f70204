package kafka

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Kafka's defaults of the timestamp window (4.x), used when the topic's
// configuration cannot be read.
const (
	defaultTimestampAfter  = time.Hour
	defaultTimestampBefore = unlimited
)

// unlimited marks a side of the window without a limit.
const unlimited = time.Duration(-1)

// TimestampWindow is a topic's message.timestamp.{after,before}.max.ms
// (unlimited: no limit) and where they come from.
type TimestampWindow struct {
	after, before time.Duration
	logAppend     bool   // message.timestamp.type=LogAppendTime: the broker sets it
	note          string // why the defaults are used, if they are
}

// Outside returns why ts is outside the window at now, or nil.
func (w TimestampWindow) Outside(ts, now time.Time, topic string) error {
	if w.logAppend {
		return nil
	}
	switch {
	case w.after != unlimited && ts.After(now.Add(w.after)):
		return fmt.Errorf("its record timestamp %s (created_at, or the commit time without one) is %s ahead of now; the brokers refuse timestamps more than message.timestamp.after.max.ms (%s%s) ahead of their clock (INVALID_TIMESTAMP); correct the row's created_at, or raise message.timestamp.after.max.ms on topic %s",
			ts.UTC().Format(time.RFC3339Nano), ts.Sub(now).Round(time.Second), w.after, w.note, topic)
	case w.before != unlimited && ts.Before(now.Add(-w.before)):
		return fmt.Errorf("its record timestamp %s (created_at, or the commit time without one) is %s behind now; the brokers refuse timestamps more than message.timestamp.before.max.ms (%s%s) behind their clock (INVALID_TIMESTAMP); correct the row's created_at, or raise message.timestamp.before.max.ms on topic %s",
			ts.UTC().Format(time.RFC3339Nano), now.Sub(ts).Round(time.Second), w.before, w.note, topic)
	}
	return nil
}

// ReadTimestampWindows reads the timestamp window of each topic; a topic whose
// configuration cannot be read gets Kafka's defaults, and says so.
func ReadTimestampWindows(ctx context.Context, topics map[string]bool, opts ...kgo.Opt) map[string]TimestampWindow {
	out := map[string]TimestampWindow{}
	fallback := func(why string) TimestampWindow {
		return TimestampWindow{after: defaultTimestampAfter, before: defaultTimestampBefore,
			note: ", Kafka's default: the topic's setting could not be read: " + why}
	}
	var names []string
	for t := range topics {
		names = append(names, t)
		out[t] = fallback("not described")
	}
	adm, err := NewAdmin(opts...)
	if err != nil {
		return out
	}
	defer adm.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rcs, err := adm.DescribeTopicConfigs(ctx, names...)
	if err != nil {
		for _, t := range names {
			out[t] = fallback(err.Error())
		}
		return out
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			out[rc.Name] = fallback(rc.Err.Error())
			continue
		}
		w := TimestampWindow{after: defaultTimestampAfter, before: defaultTimestampBefore}
		for _, c := range rc.Configs {
			switch c.Key {
			case "message.timestamp.type":
				w.logAppend = c.MaybeValue() == "LogAppendTime"
			case "message.timestamp.after.max.ms":
				w.after = millis(c.MaybeValue(), w.after)
			case "message.timestamp.before.max.ms":
				w.before = millis(c.MaybeValue(), w.before)
			}
		}
		out[rc.Name] = w
	}
	return out
}

// millis parses a millisecond setting: def when unparsable, unlimited
// for a negative value or one beyond what a Duration holds (Kafka writes
// "no limit" as Long.MAX_VALUE).
func millis(v string, def time.Duration) time.Duration {
	n, err := strconv.ParseInt(v, 10, 64)
	switch {
	case err != nil:
		return def
	case n < 0 || n > int64(math.MaxInt64/time.Millisecond):
		return unlimited
	}
	return time.Duration(n) * time.Millisecond
}
