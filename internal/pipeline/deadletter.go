package pipeline

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/route"
)

// TooLarge is the row error of a record the sink refused as over its
// topic's limit (Sink.Produce); it names the row, the limit and the
// setting to change.
func TooLarge(row *binlog.OutboxRow, txn *binlog.Txn, tl *kafka.TooLargeError) *route.RowError {
	return route.TooLarge(row.Database+"."+row.Table, txn.GTID, string(row.EventID), tl.Error())
}

// ProduceDeadLetter produces with produce the dead letter of row, which
// was refused with re, to topic, and returns it. A dead letter that does
// not fit in a batch of topic (a *kafka.TooLargeError from produce) is
// produced again with its payload truncated until it fits. A row refused
// for its timestamp is given the current time: its own would be refused
// again.
func ProduceDeadLetter(ctx context.Context, produce func(context.Context, *kgo.Record) error, topic string, row *binlog.OutboxRow, txn *binlog.Txn, re *route.RowError) (*kgo.Record, error) {
	build := func(fits func(*kgo.Record) bool) *kgo.Record {
		dl := route.DeadLetter(topic, row, txn, re, fits)
		if re.Kind == KindInvalidTimestamp {
			dl.Timestamp = time.Now()
		}
		return dl
	}
	dl := build(func(*kgo.Record) bool { return true })
	err := produce(ctx, dl)
	var tl *kafka.TooLargeError
	if !errors.As(err, &tl) {
		return dl, err
	}
	dl = build(func(rec *kgo.Record) bool { return kafka.BatchBytes(rec) <= tl.Limit.Bytes })
	return dl, produce(ctx, dl)
}
