package pipeline

import (
	"fmt"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/route"
)

// tooLarge is the row error of a record over its topic's limit; it names
// the limit and the setting to change.
func tooLarge(row *binlog.OutboxRow, txn *binlog.Txn, topic string, size int, lim kafka.Limit) *route.RowError {
	return route.TooLarge(row.Database+"."+row.Table, txn.GTID, string(row.EventID),
		fmt.Sprintf("record for topic %s takes %d bytes in a record batch, over %s (%d bytes); %s",
			topic, size, lim.Source.Setting(topic), lim.Bytes, lim.Source.Fix(topic, size)))
}
