package binlog

import (
	"time"

	"github.com/binlog-router/binlog-router/internal/schema"
)

// OutboxRow is one INSERTed row of an outbox table, decoded from a row event.
//
// Byte-slice fields alias the decoded binlog packet: they stay valid and
// unchanged for as long as the row is referenced, and must never be written
// to. A nil slice means SQL NULL or an absent optional column; a non-nil
// empty slice is the empty string. Table and Database are never empty.
type OutboxRow struct {
	Database string // schema of the outbox table
	Table    string // outbox table name

	EventID       []byte // event id column (UUID text)
	AggregateType []byte // aggregate type column
	AggregateID   []byte // aggregate id column; the Kafka key
	EventType     []byte // event type column
	Payload       []byte // payload as stored; nil is NULL
	// PayloadBinary is set when the payload column is a binary string
	// (BINARY, VARBINARY, a BLOB type): its bytes are not text.
	PayloadBinary bool
	// PayloadJSON is set when the reader checked the payload and found
	// one JSON value in UTF-8 (Config.CheckPayloadJSON). False says
	// nothing: not checked, or checked and not JSON.
	PayloadJSON   bool
	SchemaVersion []byte // decimal text of schema_version; nil when NULL or absent
	Traceparent   []byte // W3C traceparent; nil when NULL or absent
	Headers       []byte // JSON object text of the headers column; nil when NULL or absent

	CreatedAt time.Time // created_at; zero when NULL or absent

	Txn *Txn // the transaction the row belongs to
}

// Txn describes the binlog transaction that rows belong to. One Txn value is
// shared by every Batch of that transaction.
type Txn struct {
	GTID string    // the transaction's GTID in server syntax: "0-1-42" or "uuid:7" or "uuid:tag:7"
	Time time.Time // commit time reported by the server (event header or immediate commit timestamp)

	// Layouts are the definitions of the outbox tables in force after
	// the transaction, by db.table, as far as the reader knows them (nil
	// or a table absent: not known). A checkpoint that covers the
	// transaction stores them, and Reader.SetLayouts hands them back. The
	// map is shared between transactions and must not be changed.
	Layouts map[string]schema.TableDef

	// XA is set on a transaction that prepares, commits or rolls back an
	// XA transaction: the XA transactions still prepared after it, which
	// a checkpoint covering it must carry (Reader.SetPrepared takes them
	// back). Nil on every other transaction.
	XA *PreparedSet

	id gtidID
}
