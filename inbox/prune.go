package inbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Pruner deletes one consumer's old inbox rows. It needs only the
// database, so a maintenance job can run it without joining the group.
type Pruner struct {
	// DB holds the inbox table.
	DB *sql.DB
	// Dialect is DB's dialect: MySQL or PostgreSQL.
	Dialect Dialect
	// Table is the inbox table ("table" or "schema.table"); default "inbox".
	Table string
	// ConsumerName is the consumer whose rows are deleted.
	ConsumerName string
}

// Prune deletes the consumer's inbox rows consumed more than olderThan ago
// (by the database clock), batch rows per statement and transaction so
// that locks stay short, and returns how many it deleted. A pruned event
// that is delivered again is applied again: keep rows longer than any
// redelivery or replay can reach back.
func (p Pruner) Prune(ctx context.Context, olderThan time.Duration, batch int) (int64, error) {
	table := p.Table
	if table == "" {
		table = DefaultTable
	}
	switch {
	case p.DB == nil:
		return 0, errors.New("inbox: prune: DB is nil")
	case p.ConsumerName == "":
		return 0, errors.New("inbox: prune: ConsumerName is empty")
	case p.Dialect != MySQL && p.Dialect != PostgreSQL:
		return 0, fmt.Errorf("inbox: prune: Dialect %v: want inbox.MySQL or inbox.PostgreSQL", p.Dialect)
	case batch < 1:
		return 0, fmt.Errorf("inbox: prune batch %d: want at least 1", batch)
	case olderThan < 0:
		return 0, fmt.Errorf("inbox: prune age %v: want at least 0", olderThan)
	}
	qt, err := quoteTable(p.Dialect, table)
	if err != nil {
		return 0, err
	}
	st := newStatements(p.Dialect, table, qt)
	var total int64
	for {
		res, err := p.DB.ExecContext(ctx, st.prune, p.ConsumerName, olderThan.Microseconds(), batch)
		if err != nil {
			return total, fmt.Errorf("inbox: pruning %s: %w", table, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("inbox: pruning %s: %w", table, err)
		}
		total += n
		if n < int64(batch) {
			return total, nil
		}
	}
}

// Prune is Pruner.Prune for this consumer's table and name.
func (c *Consumer) Prune(ctx context.Context, olderThan time.Duration, batch int) (int64, error) {
	return Pruner{DB: c.cfg.DB, Dialect: c.cfg.Dialect, Table: c.cfg.Table, ConsumerName: c.cfg.ConsumerName}.Prune(ctx, olderThan, batch)
}
