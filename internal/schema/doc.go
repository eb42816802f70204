// Package schema owns the outbox table contract: which columns an outbox
// table has, how their names map to the fields of an outbox event, and the
// CREATE TABLE statement that binlog-router recommends.
//
// # The contract
//
// An outbox table is append-only: the router reads its INSERTs from the row
// binlog and ignores UPDATEs and DELETEs. Each row is one event. The default
// layout (see [DDL] with [DefaultColumns]) is:
//
//	id              BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY  not read by the router
//	event_id        CHAR(36) NOT NULL UNIQUE                    event id, UUID text
//	aggregate_type  VARCHAR(255) NOT NULL                       topic template input
//	aggregate_id    VARCHAR(255) NOT NULL                       Kafka record key
//	event_type      VARCHAR(255) NOT NULL                       header
//	payload         JSON NULL                                   Kafka record value
//	created_at      TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)
//	schema_version  INT NULL                                    optional
//	traceparent     VARCHAR(55) NULL                            optional, W3C trace context
//	headers         JSON NULL                                   optional, object of extra headers
//
// On MariaDB the JSON columns are LONGTEXT with CHECK (JSON_VALID(col)).
//
// The required columns are event id, aggregate type, aggregate id, event
// type and payload. A table without one of them is rejected by
// [Columns.Resolve] with a [*MissingColumnError] that names the fix. The
// optional columns (created_at, schema_version, traceparent, headers) are used
// when the table has them and ignored when it does not, so a table created
// before an optional column existed keeps working. The printed DDL makes the
// optional columns real NULL columns rather than commented-out lines: a user
// who copies it gets every feature without editing SQL, an unused NULL column
// costs almost nothing, and a column that is not wanted can simply be dropped.
//
// Column names are configurable per field (flags --column-event-id,
// --column-aggregate-type, --column-aggregate-id, --column-event-type,
// --column-payload, --column-created-at, --column-schema-version,
// --column-traceparent, --column-headers); error messages name these flags.
// The "debezium" [Preset] maps Debezium's outbox table (id, aggregatetype,
// aggregateid, type, payload) and has no created_at: the commit time of the
// transaction is used instead.
//
// # Column order
//
// Row events carry values by ordinal, not by name. [Columns.Resolve] turns
// the table's column names, in ordinal order, into a [Layout] of ordinals.
// The names come from the binlog's TABLE_MAP metadata when the server logs
// it (binlog_row_metadata=FULL) and otherwise from the table definitions
// ([TableDef] of [ColumnDef]: names, data types, character sets, signs,
// the table's default character set) the reader tracks, first read with
// [TableDefinition]; after any DDL touching an outbox table the layout
// must be resolved again. A definition stored by an earlier version
// (names and types only) reads with character sets and signs not known.
//
// This package does not import go-mysql: it works on plain names and ordinals.
package schema
