package outbox_test

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/binlog-router/binlog-router/outbox"
)

// The business write and its event in one transaction.
func ExampleInsert() {
	ctx := context.Background()
	var db *sql.DB // sql.Open("mysql", dsn)

	placeOrder := func(orderID string, total string) (err error) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer func() {
			if err != nil {
				_ = tx.Rollback()
			}
		}()
		if _, err = tx.ExecContext(ctx, "INSERT INTO orders (id, total) VALUES (?, ?)", orderID, total); err != nil {
			return err
		}
		_, err = outbox.Insert(ctx, tx, outbox.Event{
			AggregateType: "order",
			AggregateID:   orderID,
			Type:          "OrderCreated", // topic outbox.event.OrderCreated
			Payload:       map[string]string{"id": orderID, "total": total},
		})
		if err != nil {
			return err
		}
		return tx.Commit()
	}
	_ = placeOrder
}

// A Debezium outbox table in another database; the router runs with
// --outbox-table billing.outbox_events --preset debezium.
func ExampleNew() {
	w := outbox.New("billing.outbox_events", outbox.WithColumns(outbox.DebeziumColumns()))
	ddl, err := w.DDL(outbox.FlavorMySQL)
	if err != nil {
		panic(err)
	}
	fmt.Print(ddl)
	// Output:
	// CREATE TABLE `billing`.`outbox_events` (
	//   `id` CHAR(36) NOT NULL,
	//   `aggregatetype` VARCHAR(255) NOT NULL,
	//   `aggregateid` VARCHAR(255) NOT NULL,
	//   `type` VARCHAR(255) NOT NULL,
	//   `payload` JSON NULL,
	//   PRIMARY KEY (`id`)
	// ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
}
