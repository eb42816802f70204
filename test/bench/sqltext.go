package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
)

// Table names in the benchmark database.
const (
	benchDB     = "bench"
	outboxTable = "outbox"
	otherTable  = "orders" // the non-outbox traffic in the same binlog
)

const otherDDL = "CREATE TABLE " + otherTable + ` (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  customer VARCHAR(64) NOT NULL,
  total DECIMAL(12,2) NOT NULL,
  note VARCHAR(255) NOT NULL
) ENGINE=InnoDB`

// appendOutboxInsert appends one multi-row INSERT of events into the
// outbox table: one statement, one transaction under autocommit.
func appendOutboxInsert(b []byte, events []outboxEvent) []byte {
	b = append(b, "INSERT INTO "+outboxTable+" (event_id,aggregate_type,aggregate_id,event_type,payload) VALUES "...)
	for i := range events {
		e := &events[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '(')
		b = appendQuoted(b, e.ID)
		b = append(b, ',')
		b = appendQuoted(b, e.AggregateType)
		b = append(b, ',')
		b = appendQuoted(b, e.AggregateID)
		b = append(b, ',')
		b = appendQuoted(b, e.EventType)
		b = append(b, ',')
		b = appendQuoted(b, string(e.Payload))
		b = append(b, ')')
	}
	return b
}

// appendOtherInsert appends one multi-row INSERT of n rows into the
// non-outbox table.
func appendOtherInsert(b []byte, rng *rand.Rand, n int) []byte {
	b = append(b, "INSERT INTO "+otherTable+" (customer,total,note) VALUES "...)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, "('cust-%05d',%d.%02d,'", rng.IntN(100000), rng.IntN(100000), rng.IntN(100))
		for range 80 {
			b = append(b, fillAlphabet[rng.IntN(62)])
		}
		b = append(b, "')"...)
	}
	return b
}

// appendQuoted appends s as a single-quoted SQL string literal.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '\\':
			b = append(b, '\\', c)
		default:
			b = append(b, c)
		}
	}
	return append(b, '\'')
}

// binlogPos returns the server's @@gtid_binlog_pos.
func binlogPos(ctx context.Context, db *sql.DB) (position, error) {
	var s string
	if err := db.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&s); err != nil {
		return nil, fmt.Errorf("reading @@gtid_binlog_pos: %w", err)
	}
	return parsePosition(s)
}
