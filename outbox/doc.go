// Package outbox writes transactional-outbox events for binlog-router from
// Go applications using database/sql with MySQL or MariaDB.
//
// An application changes its own tables and, in the same transaction,
// inserts one outbox row per event. binlog-router reads the committed rows
// from the row binlog, as a replica does, and produces each one to Kafka:
// the topic from the event type (default template outbox.event.{event_type}),
// the key from AggregateID, the value from Payload, and headers id,
// event_type, aggregate_type, schema_version, traceparent, the Headers
// entries and binlog_gtid.
//
//	tx, err := db.BeginTx(ctx, nil)
//	...
//	_, err = tx.ExecContext(ctx, "INSERT INTO orders (id, total) VALUES (?, ?)", id, total)
//	...
//	eventID, err := outbox.Insert(ctx, tx, outbox.Event{
//		AggregateType: "order",
//		AggregateID:   id,
//		Type:          "OrderCreated",
//		Payload:       order, // encoded with encoding/json
//	})
//	...
//	err = tx.Commit()
//
// # The contract
//
//   - Same transaction. Insert the event in the transaction of the business
//     write it describes. Then the event is published if and only if the
//     change committed: a rollback writes neither, and a crash after the
//     commit loses neither. Writing the event in a second transaction
//     brings back the dual-write problem the outbox exists to solve.
//   - Append only. Never UPDATE an outbox row: the router publishes the
//     INSERT it read from the binlog and ignores later changes (it warns, or
//     with --on-update=fail stops). To correct an event, insert a new one.
//   - Deleting is allowed. The router ignores DELETEs, so rows may be deleted
//     at any time after the insert, even right after it in the same
//     transaction, to keep the table small: the INSERT is still in the
//     binlog, where the router reads it. Keep binlogs long enough for the
//     router to read them.
//   - Ids sort by time. A zero Event.ID becomes a UUIDv7: unique, time
//     ordered (monotonic within a process), and stored as its canonical
//     36-character text, which the router requires (--require-uuid). The id
//     is the record's "id" header; the router delivers each event at least
//     once (exactly once to read_committed consumers with its default
//     delivery), so consumers that need it deduplicate by id.
//   - Order. Events of one AggregateID go to one partition, in commit order
//     and, within a transaction, in insert order.
//   - Validation. Insert and InsertMany reject an event whose AggregateType,
//     AggregateID or Type is empty, whose Payload does not encode as JSON,
//     whose Traceparent is not a W3C traceparent, whose Headers have an empty
//     key, or that sets an optional field the table has no column for, with a
//     *FieldError naming the field, before anything is sent to the server. The
//     router would otherwise stop at such a row (or dead-letter it). Lengths
//     are checked by the server: keep its strict SQL mode (the default) so
//     that a value too long for its column fails the transaction instead of
//     being truncated.
//   - created_at is the server's DEFAULT CURRENT_TIMESTAMP(6), the record
//     timestamp; the Writer never writes it.
//
// The table is the one DDL returns (the same text as `binlog-router
// schema`). Another name or layout, such as Debezium's, is configured with
// New and WithColumns, and the router must be given the same with
// --outbox-table and --preset or --column-* flags.
//
// Statements use ? placeholders and work with any database/sql driver for
// MySQL or MariaDB; this package imports none. JSON values are sent as
// strings in the connection's character set, which MySQL's JSON type
// accepts (a []byte argument would be a binary string, which it refuses).
//
// # Trace context
//
// Event.Traceparent carries a W3C traceparent so that consumers can join
// the producer's trace. This package has no OpenTelemetry dependency; with
// OpenTelemetry, inject the span of ctx into a map and pass its value:
//
//	carrier := propagation.MapCarrier{}
//	propagation.TraceContext{}.Inject(ctx, carrier)
//	e.Traceparent = carrier.Get("traceparent") // "" when ctx has no span: NULL
package outbox
