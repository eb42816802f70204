package recovery

import (
	"context"
	"fmt"

	"github.com/binlog-router/binlog-router/internal/schema"
)

// Order is the order in which recovery reads a table's rows, and so
// publishes them: the order a consumer sees for the recovered events of
// one aggregate.
type Order string

const (
	// OrderAuto takes OrderKey when the primary key is AUTO_INCREMENT,
	// else OrderCreatedAt when a creation time column is mapped, else
	// OrderKey with a warning that the order per aggregate is not the
	// commit order.
	OrderAuto Order = "auto"
	// OrderKey reads in primary key order: keyset `key > last`.
	OrderKey Order = "key"
	// OrderCreatedAt reads in creation time order, ties broken by the
	// primary key: keyset `c > c(last) OR (c = c(last) AND key > last)`.
	OrderCreatedAt Order = "created-at"
)

// DefaultOrder is the order of Config.Order's zero value.
const DefaultOrder = OrderAuto

// Orders are the values of Config.Order.
var Orders = []Order{OrderAuto, OrderKey, OrderCreatedAt}

// Valid reports whether o is one of Orders.
func (o Order) Valid() bool {
	for _, v := range Orders {
		if o == v {
			return true
		}
	}
	return false
}

// TableOrder is the order one table was read in, and why.
type TableOrder struct {
	Table  string
	Order  Order  // OrderKey or OrderCreatedAt
	Reason string // why this order, in a phrase
}

// orderPlan is the order chosen for a table and the warnings that go
// with it (each one line for the log).
type orderPlan struct {
	order    Order
	reason   string
	warnings []string
	indexed  bool // created-at order: an index begins with the creation time column
}

// planOrder chooses the order of s for want (see Order's constants) and,
// for created-at order, whether an index serves it. It refuses
// created-at order without a creation time column, naming the flag.
func planOrder(ctx context.Context, q querier, s *source, want Order, createdAtFlag string) (orderPlan, error) {
	key := fmt.Sprintf("primary key %q", s.key)
	var p orderPlan
	switch {
	case want == OrderKey:
		p = orderPlan{order: OrderKey, reason: "--recover-order key"}
	case want == OrderCreatedAt:
		if s.createdAt == "" {
			return p, fmt.Errorf("outbox table %s: %w: --recover-order created-at needs a creation time column, and --column-created-at %q names none in the table; map a TIMESTAMP or DATETIME column with --column-created-at, or use --recover-order key", s.name, ErrUnusableTable, createdAtFlag)
		}
		p = orderPlan{order: OrderCreatedAt, reason: "--recover-order created-at"}
	case s.keyAutoIncrement:
		p = orderPlan{order: OrderKey, reason: key + " is AUTO_INCREMENT: key order is insert order"}
	case s.createdAt != "":
		p = orderPlan{order: OrderCreatedAt, reason: fmt.Sprintf("%s is not AUTO_INCREMENT, so its order is not insert order; %q is the creation time", key, s.createdAt)}
	default:
		p = orderPlan{order: OrderKey, reason: key + " is not AUTO_INCREMENT and no creation time column is mapped"}
		p.warnings = append(p.warnings, fmt.Sprintf("outbox table %s is read in order of its %s, which is not AUTO_INCREMENT: the events of one aggregate may be published in another order than they were committed; map the creation time column with --column-created-at, or give --recover-order key if the key is time-ordered (UUIDv7, ULID)", s.name, key))
	}
	if p.order != OrderCreatedAt {
		return p, nil
	}
	var err error
	if p.indexed, err = s.createdIndexed(ctx, q); err != nil {
		return p, err
	}
	if !p.indexed {
		p.warnings = append(p.warnings, fmt.Sprintf("outbox table %s has no index that begins with %q: each chunk's query sorts every row of the window left to read; add one: ALTER TABLE %s ADD INDEX (%s)",
			s.name, s.createdAt, s.name.QuotedString(), schema.QuoteIdentifier(s.createdAt)))
	}
	if s.createdAtPrecision == 0 {
		p.warnings = append(p.warnings, fmt.Sprintf("outbox table %s: creation time column %q has whole seconds: the rows of one second are read in %s order, not in creation order; a %s(6) column keeps microseconds",
			s.name, s.createdAt, key, upper(s.createdAtType)))
	}
	return p, nil
}

func upper(t string) string {
	if t == "timestamp" {
		return "TIMESTAMP"
	}
	return "DATETIME"
}

// createdIndexed reports whether an index of s begins with its creation
// time column.
func (s *source) createdIndexed(ctx context.Context, q querier) (bool, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.STATISTICS
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND SEQ_IN_INDEX = 1 AND COLUMN_NAME = ?`, s.name.Database, s.name.Table, s.createdAt).Scan(&n); err != nil {
		return false, fmt.Errorf("reading the indexes of %s: %w", s.name, err)
	}
	return n > 0, nil
}
