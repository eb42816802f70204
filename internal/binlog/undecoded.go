package binlog

import (
	"sync"

	"github.com/go-mysql-org/go-mysql/replication"
)

// undecoded hands the row data of outbox INSERT events, which go-mysql's
// parser goroutine leaves undecoded, to the stream, which decodes it with
// the table's rowCodec (or go-mysql's decoder when that cannot).
//
// It is a side channel keyed by the event because go-mysql allows no
// plain hand-over: its rows decoder hook (BinlogSyncerConfig's
// RowsEventDecodeFunc) receives the *RowsEvent and the event's body and
// returns only an error, and RowsEvent has no field for undecoded bytes
// (Rows holds decoded values). The stream could find the bytes again in
// BinlogEvent.RawData, but only by decoding the rows header a second time
// to learn where the rows begin.
type undecoded struct {
	mu sync.Mutex
	m  map[*replication.RowsEvent][]byte
}

func newUndecoded() *undecoded {
	return &undecoded{m: map[*replication.RowsEvent][]byte{}}
}

func (u *undecoded) put(e *replication.RowsEvent, data []byte) {
	u.mu.Lock()
	u.m[e] = data
	u.mu.Unlock()
}

// take returns and forgets the row data of e.
func (u *undecoded) take(e *replication.RowsEvent) ([]byte, bool) {
	u.mu.Lock()
	data, ok := u.m[e]
	if ok {
		delete(u.m, e)
	}
	u.mu.Unlock()
	return data, ok
}

// reset forgets the events of a lost connection.
func (u *undecoded) reset() {
	u.mu.Lock()
	clear(u.m)
	u.mu.Unlock()
}

// decodeOutboxRows runs on go-mysql's parser goroutine as its rows event
// decoder: it decodes only the header of every rows event, and keeps the
// row data of outbox INSERTs for the stream. Other tables' rows, and
// outbox UPDATEs and DELETEs (only counted), are never decoded.
func decodeOutboxRows(outbox outboxSet, u *undecoded, e *replication.RowsEvent, data []byte) error {
	pos, err := e.DecodeHeader(data)
	if err != nil {
		return err
	}
	if e.Type() == replication.EnumRowsEventTypeInsert && outbox.has(e.Table.Schema, e.Table.Table) {
		u.put(e, data[pos:])
	}
	return nil
}
