// Package route owns the record contract: what a Kafka consumer sees for
// each outbox row. It turns one binlog.OutboxRow of one binlog.Txn into one
// *kgo.Record, and says which partition that record goes to. It is pure
// logic: no I/O, no goroutines, no clocks.
//
// # The record
//
// Topic: Config.TopicTemplate with its placeholders replaced by the row's
// values: {event_type}, {aggregate_type}, {database}, {table}. The default
// is "outbox.event.{event_type}". A placeholder other than these four, a
// "{" without "}" or a "}" without "{", an empty template, or literal text
// that cannot appear in a topic name is a configuration error at New. A
// topic Kafka would reject (empty, "." or "..", a character outside
// [A-Za-z0-9._-], longer than 249) is a row error of kind invalid_topic, and
// so is a template placeholder whose value is NULL or empty.
//
// Key: the aggregate_id bytes as the binlog package hands them over (what
// SELECT prints: text in UTF-8, numbers as decimal text, binary strings as
// their bytes). Value: the payload bytes likewise; a NULL payload gives a
// nil Value, which Kafka stores as a null value (a tombstone); an empty
// payload gives an empty, non-nil Value (only when ValidateJSON is off: ""
// is not JSON). ValidateJSON requires JSON in UTF-8 (RFC 8259).
//
// Headers, in this order:
//
//   - id: event_id
//   - event_type
//   - aggregate_type, when not NULL
//   - schema_version, when not NULL
//   - traceparent, when not NULL
//   - one header per member of the headers column's JSON object, in document
//     order, duplicates kept: a string value as its decoded UTF-8 bytes,
//     any other value as its compact JSON text (numbers exactly as written)
//   - binlog_gtid: the transaction's GTID, in server syntax
//
// Members of the headers column may reuse the names above; they are kept as
// extra headers, after the router's own, never replacing them.
//
// Timestamp: created_at when not NULL, else the transaction's commit time.
// (If both are zero, franz-go stamps the record when it is produced.)
//
// Partition: PartitionFor(key, n), the Java client's default partitioner
// for keyed records, toPositive(murmur2(key)) % n. Produce with Partitioner()
// so that every producer of a topic agrees where an aggregate's events go
// and they stay in order.
//
// # CloudEvents envelopes
//
// Config.Envelope EnvelopeCloudEvents writes the CloudEvents 1.0 Kafka
// protocol binding in binary content mode: the plain record above, with
// these headers after its own:
//
//   - ce_specversion: 1.0
//   - ce_id: event_id
//   - ce_source: Config.CloudEventsSource for the row's table
//     (DefaultCloudEventsSource, /mysql/{database}/{table})
//   - ce_type: event_type
//   - ce_time: the record timestamp (created_at, else the commit time) in
//     RFC 3339, UTC, with its fractional seconds; absent when both are zero
//   - ce_subject: aggregate_id
//   - content-type: the datacontenttype; absent for a NULL payload
//   - ce_aggregatetype, ce_schemaversion, ce_traceparent (the
//     distributed-tracing extension) for the columns that are not NULL,
//     and ce_<name> for each member of the headers column
//
// EnvelopeCloudEventsStructured writes the structured content mode: the
// plain record's headers, then content-type application/cloudevents+json;
// the value is one JSON object of the same attributes and extensions
// (every value a JSON string) and the payload: a JSON payload as data
// as it is, a text payload as data holding a JSON string, a binary payload
// as data_base64; a NULL payload gives an event without data (not a
// tombstone). Invalid UTF-8 in attribute values becomes U+FFFD there.
//
// The datacontenttype is application/json when ValidateJSON has checked
// the payload; otherwise application/octet-stream for a binary payload
// column (binlog.OutboxRow.PayloadBinary), application/json for text that
// is JSON, text/plain; charset=utf-8 for other text. The key is
// aggregate_id in both modes.
//
// A member of the headers column becomes an extension attribute of its
// own name, which must follow the CloudEvents naming rule (a-z and 0-9
// only), must not be an attribute the router sets and must not repeat;
// otherwise the row is a row error of kind invalid_extension. The plain
// envelope accepts such members.
//
// # Row errors
//
// A row that cannot become a record gives a *RowError naming the table, the
// GTID and the event_id, with a Kind for metrics and a sentinel for
// errors.Is; it names the flag that turns a check off (--require-uuid,
// --validate-json) and shows values as a person reads them (UUID text for
// 16 bytes that are not text, 0x hex for other bytes that are not text).
// Rows are checked in this order and the first failure is
// reported: event_id NULL or empty (null_event_id); event_id not a canonical
// UUID when Config.RequireUUID (invalid_event_id); aggregate_id NULL or
// empty (null_aggregate_id); event_type NULL or empty (null_event_type);
// payload not valid JSON when Config.ValidateJSON (invalid_payload_json);
// with Config.Contracts, a non-NULL payload that violates its event type's
// JSON Schema (contract_violation) or an event type with no schema under
// --contracts-missing=fail (contract_missing); the topic (invalid_topic); the headers column not valid JSON or not an
// object (invalid_headers); with a CloudEvents envelope, a member of the
// headers column that cannot be an extension attribute
// (invalid_extension). Record never panics on any row content, and the
// same row always gives the same result. A record larger than the producer
// may send is a row error too (record_too_large): the relay checks the size
// and builds it with TooLarge.
//
// # Dead letters
//
// DeadLetter builds the record that diverts a row with a row error to the
// dead-letter topic (--on-invalid=dead-letter): key aggregate_id (event_id
// without one), the row's id, binlog_gtid, source table, error kind and
// error in headers, and a JSON value holding the row's columns, the error
// and where the row came from. It never fails: a payload too large for the
// topic is truncated, and marked so, until the record fits.
//
// # Aliasing and cost
//
// Key, Value and most header values alias the row's bytes, which the binlog
// package promises are immutable; nothing here writes to them, and neither
// may anyone holding the record. A Router caches topic names and header keys
// (bounded) and is not safe for concurrent use. A record costs two
// allocations (the record and its header slice) plus one per new GTID, plus
// copies for header-column values that need unescaping or compacting.
package route
