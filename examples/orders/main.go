// Command orders is a minimal application that publishes events through
// binlog-router: in ONE transaction it inserts an order (the business write)
// and the OrderCreated outbox event, then commits. The router, watching the
// outbox table, produces the event to the Kafka topic outbox.event.OrderCreated
// with the order id as key.
//
//	go run ./examples/orders -dsn 'app:app-secret@tcp(127.0.0.1:3306)/shop'
//
// It creates the orders and outbox tables if they are missing. See
// examples/README.md.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"

	_ "github.com/go-sql-driver/mysql"
	"github.com/google/uuid"

	"github.com/binlog-router/binlog-router/outbox"
)

const ordersDDL = `CREATE TABLE IF NOT EXISTS orders (
  id       BIGINT NOT NULL PRIMARY KEY,
  customer VARCHAR(100) NOT NULL,
  status   VARCHAR(20) NOT NULL,
  total    DECIMAL(10,2) NOT NULL
) DEFAULT CHARSET=utf8mb4`

// OrderCreated is the event's payload, the Kafka record value.
type OrderCreated struct {
	OrderID  int64  `json:"order_id"`
	Customer string `json:"customer"`
	Total    string `json:"total"`
	Currency string `json:"currency"`
}

func main() {
	dsn := flag.String("dsn", envOr("MYSQL_DSN", "app:app-secret@tcp(127.0.0.1:3306)/shop"),
		"go-sql-driver/mysql DSN of the application's database (env MYSQL_DSN)")
	customer := flag.String("customer", "Ada Lovelace", "customer name")
	total := flag.String("total", "42.50", "order total")
	flag.Parse()
	log.SetFlags(0)
	if err := run(context.Background(), *dsn, *customer, *total); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, dsn, customer, total string) error {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := createTables(ctx, db); err != nil {
		return err
	}
	orderID, eventID, err := placeOrder(ctx, db, customer, total)
	if err != nil {
		return err
	}
	fmt.Printf("order %d created, event %s\n", orderID, eventID)
	return nil
}

// placeOrder writes the order and its event in one transaction: both are
// committed or neither is.
func placeOrder(ctx context.Context, db *sql.DB, customer, total string) (orderID int64, eventID uuid.UUID, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, uuid.Nil, err
	}
	defer tx.Rollback() // a no-op after Commit

	if err := tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 1000) + 1 FROM orders FOR UPDATE").Scan(&orderID); err != nil {
		return 0, uuid.Nil, fmt.Errorf("choosing an order id: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO orders (id, customer, status, total) VALUES (?, ?, 'created', ?)",
		orderID, customer, total); err != nil {
		return 0, uuid.Nil, fmt.Errorf("inserting the order: %w", err)
	}
	id, err := outbox.Insert(ctx, tx, outbox.Event{
		AggregateType: "order",
		AggregateID:   fmt.Sprint(orderID), // the Kafka key: one order's events stay in order
		Type:          "OrderCreated",      // the topic: outbox.event.OrderCreated
		Payload:       OrderCreated{OrderID: orderID, Customer: customer, Total: total, Currency: "EUR"},
	})
	if err != nil {
		return 0, uuid.Nil, err
	}
	return orderID, id, tx.Commit()
}

// createTables creates the orders table and the outbox table, as
// `binlog-router schema` prints it, unless they exist.
func createTables(ctx context.Context, db *sql.DB) error {
	var version string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return err
	}
	flavor := outbox.FlavorMySQL
	if strings.Contains(strings.ToLower(version), "mariadb") {
		flavor = outbox.FlavorMariaDB
	}
	ddl, err := outbox.DDL(flavor)
	if err != nil {
		return err
	}
	ddl = strings.Replace(ddl, "CREATE TABLE ", "CREATE TABLE IF NOT EXISTS ", 1)
	for _, q := range []string{ordersDDL, ddl} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("creating tables: %w", err)
		}
	}
	return nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
