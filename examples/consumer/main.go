// Command consumer is a minimal service on the consuming side of
// binlog-router: it reads the OrderCreated events that examples/orders
// writes and creates one invoice per order, through the inbox package, so
// that a redelivered or replayed event creates no second invoice.
//
//	go run ./examples/consumer -dsn 'app:app-secret@tcp(127.0.0.1:3306)/billing' -brokers 127.0.0.1:9092
//
// It creates the invoices and inbox tables if they are missing; Run joins
// the consumer group (and creates the dead-letter topic billing.dead-letter
// if it is missing), and on SIGINT or SIGTERM commits its offsets and
// leaves the group. See examples/README.md.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"

	_ "github.com/go-sql-driver/mysql"
	"github.com/rs/zerolog"

	"github.com/binlog-router/binlog-router/inbox"
)

const invoicesDDL = `CREATE TABLE IF NOT EXISTS invoices (
  order_id BIGINT NOT NULL PRIMARY KEY,
  customer VARCHAR(100) NOT NULL,
  total    DECIMAL(10,2) NOT NULL,
  currency CHAR(3) NOT NULL
) DEFAULT CHARSET=utf8mb4`

// OrderCreated is the payload examples/orders publishes.
type OrderCreated struct {
	OrderID  int64  `json:"order_id"`
	Customer string `json:"customer"`
	Total    string `json:"total"`
	Currency string `json:"currency"`
}

func main() {
	dsn := flag.String("dsn", envOr("MYSQL_DSN", "app:app-secret@tcp(127.0.0.1:3306)/shop"),
		"go-sql-driver/mysql DSN of the service's database (env MYSQL_DSN)")
	brokers := flag.String("brokers", envOr("KAFKA_BROKERS", "127.0.0.1:9092"), "Kafka brokers, comma separated (env KAFKA_BROKERS)")
	name := flag.String("name", "billing", "consumer name: the inbox rows' consumer_name and the consumer group")
	flag.Parse()
	log.SetFlags(0)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	db, err := sql.Open("mysql", *dsn)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	logger := zerolog.New(os.Stderr).With().Timestamp().Logger()
	c, err := newConsumer(ctx, db, strings.Split(*brokers, ","), *name, &logger)
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("stopped: %+v\n", c.Stats())
}

// newConsumer creates the tables and a consumer of OrderCreated events.
func newConsumer(ctx context.Context, db *sql.DB, brokers []string, name string, logger *zerolog.Logger) (*inbox.Consumer, error) {
	if _, err := db.ExecContext(ctx, invoicesDDL); err != nil {
		return nil, fmt.Errorf("creating invoices: %w", err)
	}
	if err := inbox.CreateTable(ctx, db, inbox.MySQL, inbox.DefaultTable); err != nil {
		return nil, err
	}
	return inbox.New(inbox.Config{
		Brokers:      brokers,
		Topics:       []string{"outbox.event.OrderCreated"},
		ConsumerName: name,
		DB:           db,
		Dialect:      inbox.MySQL,
		Handler:      createInvoice,
		Logger:       logger,
	})
}

// createInvoice is the business change, in the transaction that also
// records the event in the inbox.
func createInvoice(ctx context.Context, tx *sql.Tx, ev inbox.Event) error {
	var o OrderCreated
	if err := json.Unmarshal(ev.Payload, &o); err != nil {
		return fmt.Errorf("event %s: payload is not an OrderCreated: %w", ev.ID, err)
	}
	_, err := tx.ExecContext(ctx, "INSERT INTO invoices (order_id, customer, total, currency) VALUES (?, ?, ?, ?)",
		o.OrderID, o.Customer, o.Total, o.Currency)
	return err
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
