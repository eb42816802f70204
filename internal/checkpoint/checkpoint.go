package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// DefaultTopic is the checkpoint topic used when none is configured.
const DefaultTopic = "_binlog_router_checkpoints"

// ErrCheckpointMissing means no checkpoint is stored for the name.
var ErrCheckpointMissing = errors.New("no checkpoint stored")

// Checkpoint is the stored position of one router.
type Checkpoint struct {
	Name    string `json:"name"`     // the router's --name, also the record key
	GTIDSet string `json:"gtid_set"` // server-native syntax; everything in it was published
	// TxnGTID and TxnRows place a checkpoint inside a binlog transaction
	// larger than one Kafka transaction: the first TxnRows outbox rows of
	// transaction TxnGTID (which GTIDSet does not contain) were published.
	// Both are empty at a transaction boundary.
	TxnGTID    string    `json:"txn_gtid,omitempty"`
	TxnRows    int       `json:"txn_rows,omitempty"`
	Flavor     string    `json:"flavor"`                // "mysql" or "mariadb"
	ServerID   uint32    `json:"server_id"`             // source server's @@server_id
	ServerUUID string    `json:"server_uuid,omitempty"` // source server's @@server_uuid (MySQL)
	BinlogFile string    `json:"binlog_file,omitempty"` // for information only: resuming is by GTID
	BinlogPos  uint32    `json:"binlog_pos,omitempty"`
	Time       time.Time `json:"time"`              // when the checkpoint was written
	Events     uint64    `json:"events,omitempty"`  // events published by this process so far (information)
	Source     string    `json:"source,omitempty"`  // source address (information)
	Version    string    `json:"version,omitempty"` // router version that wrote it

	// Layouts are the outbox tables' definitions in force at GTIDSet (by
	// db.table), when the router tracks them (binlog TABLE_MAP events
	// without column names): columns with their types, character sets and
	// signs, and the table's default character set. Written in the same
	// Kafka transaction as GTIDSet; a restart decodes the rows after
	// GTIDSet with them. Absent: read from the server at start. A
	// checkpoint of an earlier version holds each table as an array of
	// columns with names and types only (schema.TableDef reads it).
	Layouts map[string]schema.TableDef `json:"layouts,omitempty"`

	// XAPrepared are the XA transactions prepared within GTIDSet whose
	// COMMIT or ROLLBACK is not: their rows are published at the COMMIT,
	// read again from the binlog at the recorded position.
	XAPrepared []binlog.PreparedXA `json:"xa_prepared,omitempty"`

	// Recovery is an unfinished recover's progress (recovery.go); run
	// refuses to start from a checkpoint that holds one.
	Recovery *Recovery `json:"recovery,omitempty"`
}

// Record returns the checkpoint as a record for topic: key = Name,
// partition 0 (the topic has one partition; the record's Partition field
// is set for a manual partitioner and ignored by key partitioners).
func (c *Checkpoint) Record(topic string) (*kgo.Record, error) {
	v, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encoding checkpoint: %w", err)
	}
	return &kgo.Record{Topic: topic, Key: []byte(c.Name), Value: v, Partition: 0}, nil
}

// Decode parses a stored checkpoint value.
func Decode(value []byte) (*Checkpoint, error) {
	var c Checkpoint
	if err := json.Unmarshal(value, &c); err != nil {
		return nil, fmt.Errorf("decoding checkpoint %q: %w", truncate(value, 200), err)
	}
	if c.Flavor == "" {
		return nil, fmt.Errorf("decoding checkpoint %q: no flavor", truncate(value, 200))
	}
	return &c, nil
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// Tombstone returns the record that deletes name's checkpoint from topic: a
// null value for its key. kafka.LoadCheckpoint then returns ErrCheckpointMissing, and
// compaction eventually drops the key.
func Tombstone(topic, name string) *kgo.Record {
	return &kgo.Record{Topic: topic, Key: []byte(name), Value: nil, Partition: 0}
}
