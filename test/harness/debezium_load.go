package harness

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

// DbzTxn is one committed transaction of a DbzLoad.
type DbzTxn struct {
	GTID     string
	Rows     []OutboxRow // outbox rows in statement order
	MultiRow bool        // the rows were one INSERT (one rows event), else one INSERT each
}

// DbzLoad is an application writing Debezium's outbox table from one
// connection, so its commit order is the binlog order: each transaction
// inserts a business row, then 1 to 3 outbox rows (alternately one INSERT
// per row and one multi-row INSERT) over three aggregate types. Every
// payload carries its aggregate's sequence number.
type DbzLoad struct {
	conn *sql.Conn
	rng  *rand.Rand
	rate int // rows per second
	seq  map[string]int

	mu   sync.Mutex
	txns []DbzTxn
	err  error

	cancel context.CancelFunc
	done   chan struct{}
}

// StartDbzLoad starts a background application committing outbox rows
// through db at about rowsPerSecond; Stop ends it.
func StartDbzLoad(t *testing.T, db *sql.DB, rowsPerSecond int) *DbzLoad {
	t.Helper()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &DbzLoad{conn: conn, rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7)), rate: rowsPerSecond,
		seq: map[string]int{}, cancel: cancel, done: make(chan struct{})}
	go l.run(ctx)
	t.Cleanup(func() {
		l.Stop()
		_ = conn.Close()
	})
	return l
}

func (l *DbzLoad) run(ctx context.Context) {
	defer close(l.done)
	next := time.Now()
	for n := 0; ctx.Err() == nil; n++ {
		rows := 1 + l.rng.IntN(3)
		next = next.Add(time.Duration(rows) * time.Second / time.Duration(l.rate))
		select {
		case <-time.After(time.Until(next)):
		case <-ctx.Done():
			return
		}
		// The transaction runs to its end, outside stop's cancellation: a
		// COMMIT cut off by it may have committed all the same, and its rows
		// would then be published but not counted.
		l.mu.Lock()
		txCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		txn, err := l.tx(txCtx, rows, n%2 == 1)
		cancel()
		if err != nil {
			l.err = err
			l.mu.Unlock()
			return
		}
		l.txns = append(l.txns, txn)
		l.mu.Unlock()
	}
}

var dbzAggregateTypes = []string{"order", "customer", "payment"}

func (l *DbzLoad) tx(ctx context.Context, n int, multiRow bool) (DbzTxn, error) {
	txn := DbzTxn{MultiRow: multiRow}
	tx, err := l.conn.BeginTx(ctx, nil)
	if err != nil {
		return txn, err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, "INSERT INTO orders (customer) VALUES ('load')"); err != nil {
		return txn, err
	}
	var values []string
	var args []any
	for range n {
		typ := dbzAggregateTypes[l.rng.IntN(len(dbzAggregateTypes))]
		agg := fmt.Sprintf("%s-%d", typ, l.rng.IntN(20))
		l.seq[agg]++
		id := uuid.NewString()
		txn.Rows = append(txn.Rows, OutboxRow{ID: id, Agg: agg, Type: typ + "Changed", Seq: l.seq[agg]})
		values = append(values, "(?, ?, ?, ?, ?)")
		args = append(args, id, typ, agg, typ+"Changed", fmt.Sprintf(`{"agg":%q,"seq":%d}`, agg, l.seq[agg]))
	}
	const insert = "INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES "
	if multiRow {
		if _, err := tx.ExecContext(ctx, insert+strings.Join(values, ","), args...); err != nil {
			return txn, err
		}
	} else {
		for i := range values {
			if _, err := tx.ExecContext(ctx, insert+values[i], args[5*i:5*i+5]...); err != nil {
				return txn, err
			}
		}
	}
	return txn, l.commit(ctx, tx, &txn)
}

// commit commits tx and stores its GTID in txn.
func (l *DbzLoad) commit(ctx context.Context, tx *sql.Tx, txn *DbzTxn) error {
	if err := tx.Commit(); err != nil {
		return err
	}
	return l.conn.QueryRowContext(ctx, "SELECT @@last_gtid").Scan(&txn.GTID)
}

// Stop ends the load after the transaction in progress.
func (l *DbzLoad) Stop() {
	l.cancel()
	<-l.done
}

// Committed returns the transactions committed so far and the load's
// error, if it stopped on one.
func (l *DbzLoad) Committed() ([]DbzTxn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]DbzTxn(nil), l.txns...), l.err
}

// rows is the number of outbox rows committed so far.
func (l *DbzLoad) rows() int {
	txns, _ := l.Committed()
	n := 0
	for _, t := range txns {
		n += len(t.Rows)
	}
	return n
}

// BigTx commits one transaction of a business row and n outbox rows of
// aggregate type "order", one INSERT statement per row (sent 100 to a
// round trip), between the load's own transactions.
func (l *DbzLoad) BigTx(ctx context.Context, n int) (DbzTxn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	txn := DbzTxn{}
	tx, err := l.conn.BeginTx(ctx, nil)
	if err != nil {
		return txn, err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, "INSERT INTO orders (customer) VALUES ('big')"); err != nil {
		return txn, err
	}
	for done := 0; done < n; {
		var stmts []string
		var args []any
		for ; done < n && len(stmts) < 100; done++ {
			agg := fmt.Sprintf("order-big-%d", done%50)
			l.seq[agg]++
			id := uuid.NewString()
			txn.Rows = append(txn.Rows, OutboxRow{ID: id, Agg: agg, Type: "orderImported", Seq: l.seq[agg]})
			stmts = append(stmts, "INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES (?, 'order', ?, 'orderImported', ?)")
			args = append(args, id, agg, fmt.Sprintf(`{"agg":%q,"seq":%d}`, agg, l.seq[agg]))
		}
		if _, err := tx.ExecContext(ctx, strings.Join(stmts, ";"), args...); err != nil {
			return txn, err
		}
	}
	if err := l.commit(ctx, tx, &txn); err != nil {
		return txn, err
	}
	l.txns = append(l.txns, txn)
	return txn, nil
}
