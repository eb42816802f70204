package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// outboxTable is the table the router watches.
const outboxTable = "shop.outbox"

// ordersDDL is the app's own table; the router ignores its binlog events.
const ordersDDL = `CREATE TABLE ` + "`shop`.`orders`" + ` (
  ` + "`id`" + ` BIGINT NOT NULL PRIMARY KEY,
  ` + "`customer`" + ` VARCHAR(100) NOT NULL,
  ` + "`status`" + ` VARCHAR(20) NOT NULL,
  ` + "`total`" + ` DECIMAL(10,2) NOT NULL
) DEFAULT CHARSET=utf8mb4`

// createShop creates database shop with the outbox table, exactly as
// `binlog-router schema` prints it, and the app's own orders table.
func createShop(ctx context.Context, m *devenv.MariaDB) (*sql.DB, error) {
	ddl, err := schema.DDL(schema.FlavorMariaDB, outboxTable, schema.DefaultColumns())
	if err != nil {
		return nil, err
	}
	root, err := m.DB("")
	if err != nil {
		return nil, err
	}
	defer root.Close()
	for _, q := range []string{"CREATE DATABASE shop", ddl, ordersDDL} {
		if _, err := root.ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("creating the shop schema: %s: %w", firstLine(q), err)
		}
	}
	showTable(ddl, "from `binlog-router schema`")
	showTable(ordersDDL, "the app's own table, ignored by the router")
	return m.DB("shop")
}

// event is one outbox row as the app writes it.
type event struct {
	ID          string
	AggregateID string
	Type        string
	Payload     string
	Traceparent *string // optional column
	Headers     *string // optional column: a JSON object of extra Kafka headers
}

// businessTx is one unit of the app's work: a change to orders and the
// events that describe it, committed (or not) together.
type businessTx struct {
	what     string
	stmt     string
	args     []any
	events   []event
	rollback bool
}

func newEvent(orderID int, typ, payload string) event {
	return event{ID: uuid.NewString(), AggregateID: fmt.Sprint(orderID), Type: typ, Payload: payload}
}

// sampleTransactions is a small order lifecycle over three orders.
func sampleTransactions() []businessTx {
	traceparent := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	headers := `{"tenant":"acme","source":"checkout-service"}`
	shipped := newEvent(1001, "OrderShipped", `{"order_id":1001,"carrier":"DHL","tracking":"JD014600006281230001"}`)
	shipped.Traceparent, shipped.Headers = &traceparent, &headers
	return []businessTx{{
		what: "order 1001 created",
		stmt: "INSERT INTO orders VALUES (1001, 'Ada Lovelace', 'created', 42.50)",
		events: []event{newEvent(1001, "OrderCreated",
			`{"order_id":1001,"customer":"Ada Lovelace","total":"42.50","currency":"EUR"}`)},
	}, {
		what: "order 1002 created (utf8mb4 text)",
		stmt: "INSERT INTO orders VALUES (1002, 'Zoë Müller', 'created', 19.90)",
		events: []event{newEvent(1002, "OrderCreated",
			`{"order_id":1002,"customer":"Zoë Müller","note":"Grüße aus Köln 🚚 東京へ","total":"19.90","currency":"EUR"}`)},
	}, {
		what:   "order 1001 paid",
		stmt:   "UPDATE orders SET status = 'paid' WHERE id = 1001",
		events: []event{newEvent(1001, "OrderPaid", `{"order_id":1001,"amount":"42.50","method":"card"}`)},
	}, {
		what:     "order 1002 paid, card declined",
		stmt:     "UPDATE orders SET status = 'paid' WHERE id = 1002",
		events:   []event{newEvent(1002, "OrderPaid", `{"order_id":1002,"amount":"19.90","method":"card"}`)},
		rollback: true,
	}, {
		what: "order 1003 created and paid",
		stmt: "INSERT INTO orders VALUES (1003, 'Grace Hopper', 'paid', 7.00)",
		events: []event{
			newEvent(1003, "OrderCreated", `{"order_id":1003,"customer":"Grace Hopper","total":"7.00","currency":"EUR"}`),
			newEvent(1003, "OrderPaid", `{"order_id":1003,"amount":"7.00","method":"voucher"}`),
		},
	}, {
		what:   "order 1001 shipped (traceparent, headers)",
		stmt:   "UPDATE orders SET status = 'shipped' WHERE id = 1001",
		events: []event{shipped},
	}}
}

// written is what the app wrote: the committed events in commit order,
// the rolled-back ones, and the GTID of the last commit.
type written struct {
	committed  []event
	rolledBack []event
	lastGTID   string
}

// writeTransactions runs txs one by one on one connection, so that
// @@last_gtid names each commit's GTID.
func writeTransactions(ctx context.Context, db *sql.DB, txs []businessTx) (written, error) {
	var w written
	conn, err := db.Conn(ctx)
	if err != nil {
		return w, err
	}
	defer conn.Close()
	for _, btx := range txs {
		gtid, err := runTx(ctx, conn, btx)
		if err != nil {
			return w, fmt.Errorf("transaction %q: %w", btx.what, err)
		}
		types := make([]string, len(btx.events))
		for i, ev := range btx.events {
			types[i] = ev.Type
		}
		arrow := fmt.Sprintf("%-42s → outbox: %s", btx.what, strings.Join(types, ", "))
		if btx.rollback {
			w.rolledBack = append(w.rolledBack, btx.events...)
			out.printf("  %s  %-7s %s  %s", out.paint(yellow, "ROLLBACK"), "", arrow,
				out.paint(yellow, "(must never appear in Kafka)"))
			continue
		}
		w.committed = append(w.committed, btx.events...)
		w.lastGTID = gtid
		out.printf("  %s  %-7s %s", out.paint(green, "COMMIT  "), gtid, arrow)
	}
	return w, nil
}

// runTx writes the business change and its outbox rows in one
// transaction and returns the commit's GTID ("" after a rollback).
func runTx(ctx context.Context, conn *sql.Conn, btx businessTx) (string, error) {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback() // a no-op after Commit
	if _, err := tx.ExecContext(ctx, btx.stmt, btx.args...); err != nil {
		return "", err
	}
	for _, ev := range btx.events {
		if _, err := tx.ExecContext(ctx,
			"INSERT INTO outbox (event_id, aggregate_type, aggregate_id, event_type, payload, schema_version, traceparent, headers) "+
				"VALUES (?, 'order', ?, ?, ?, 1, ?, ?)",
			ev.ID, ev.AggregateID, ev.Type, ev.Payload, ev.Traceparent, ev.Headers); err != nil {
			return "", err
		}
	}
	if btx.rollback {
		return "", tx.Rollback()
	}
	if err := tx.Commit(); err != nil {
		return "", err
	}
	var gtid string
	if err := conn.QueryRowContext(ctx, "SELECT @@last_gtid").Scan(&gtid); err != nil {
		return "", fmt.Errorf("reading @@last_gtid: %w", err)
	}
	return gtid, nil
}

// showTable prints a CREATE TABLE statement's first line and its columns.
func showTable(ddl, comment string) {
	out.ok("%s…)  %s", firstLine(ddl), out.paint(dim, comment))
	out.note("    %s", strings.Join(ddlColumns(ddl), ", "))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}

// ddlColumns lists the column names of a CREATE TABLE statement made by
// schema.DDL, one column per line.
func ddlColumns(ddl string) []string {
	var cols []string
	for _, line := range strings.Split(ddl, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "`") {
			if name, _, ok := strings.Cut(line[1:], "`"); ok {
				cols = append(cols, name)
			}
		}
	}
	return cols
}
