package route

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
)

const testEventID = "3f2c8a4e-9b1d-4c6e-8f0a-1b2c3d4e5f60"

var (
	testCommit  = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	testCreated = time.Date(2026, 3, 1, 11, 59, 59, 500e6, time.UTC)
)

// testRow returns a valid row with every optional column NULL.
func testRow() *binlog.OutboxRow {
	return &binlog.OutboxRow{
		Database:    "shop",
		Table:       "outbox",
		EventID:     []byte(testEventID),
		AggregateID: []byte("order-42"),
		EventType:   []byte("OrderCreated"),
		Payload:     []byte(`{"id":42}`),
	}
}

func testTxn() *binlog.Txn { return &binlog.Txn{GTID: "0-1-42", Time: testCommit} }

func newRouter(t testing.TB, mod func(*Config)) *Router {
	t.Helper()
	cfg := DefaultConfig()
	if mod != nil {
		mod(&cfg)
	}
	r, err := New(cfg)
	require.NoError(t, err)
	return r
}

func TestDefaultConfig(t *testing.T) {
	cfg := DefaultConfig()
	assert.Equal(t, Config{TopicTemplate: "outbox.event.{event_type}", ValidateJSON: true, RequireUUID: true}, cfg)
	require.NoError(t, cfg.Validate())

	r, err := New(Config{}) // empty template means the default
	require.NoError(t, err)
	rec, err := r.Route(testRow(), testTxn())
	require.NoError(t, err)
	assert.Equal(t, "outbox.event.OrderCreated", rec.Topic)
}

func TestRecordBasics(t *testing.T) {
	row := testRow()
	rec, err := newRouter(t, nil).Route(row, testTxn())
	require.NoError(t, err)
	assert.Equal(t, "outbox.event.OrderCreated", rec.Topic)
	assert.Equal(t, []byte("order-42"), rec.Key)
	assert.Equal(t, []byte(`{"id":42}`), rec.Value)
	// Key and Value alias the row: no copies on the hot path.
	assert.Same(t, &row.AggregateID[0], &rec.Key[0])
	assert.Same(t, &row.Payload[0], &rec.Value[0])
	assert.Equal(t, testCommit, rec.Timestamp)
}

func TestTombstone(t *testing.T) {
	for _, validate := range []bool{true, false} {
		row := testRow()
		row.Payload = nil
		rec, err := newRouter(t, func(c *Config) { c.ValidateJSON = validate }).Route(row, testTxn())
		require.NoError(t, err)
		assert.Nil(t, rec.Value, "NULL payload must give a nil value (tombstone)")
	}

	// An empty (non-NULL) payload is not a tombstone; it is only accepted
	// without JSON validation.
	row := testRow()
	row.Payload = []byte{}
	rec, err := newRouter(t, func(c *Config) { c.ValidateJSON = false }).Route(row, testTxn())
	require.NoError(t, err)
	assert.NotNil(t, rec.Value)
	assert.Empty(t, rec.Value)
}

func TestTimestamp(t *testing.T) {
	tests := []struct {
		name      string
		createdAt time.Time
		commit    time.Time
		want      time.Time
	}{
		{"created_at wins", testCreated, testCommit, testCreated},
		{"commit time when created_at is NULL", time.Time{}, testCommit, testCommit},
		{"both zero", time.Time{}, time.Time{}, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row := testRow()
			row.CreatedAt = tt.createdAt
			rec, err := newRouter(t, nil).Route(row, &binlog.Txn{GTID: "0-1-1", Time: tt.commit})
			require.NoError(t, err)
			assert.True(t, tt.want.Equal(rec.Timestamp), "got %v want %v", rec.Timestamp, tt.want)
		})
	}
}

func TestNilTxn(t *testing.T) {
	rec, err := newRouter(t, nil).Route(testRow(), nil)
	require.NoError(t, err)
	last := rec.Headers[len(rec.Headers)-1]
	assert.Equal(t, HeaderBinlogGTID, last.Key)
	assert.Empty(t, last.Value)
}

func TestUTF8MB4PassesThrough(t *testing.T) {
	key := []byte("注文-🦄-42")
	payload := []byte(`{"name":"寿司 🍣","note":"\ud83d\ude00 ok","emoji":"🦄"}`)
	row := testRow()
	row.AggregateID = key
	row.Payload = payload
	row.AggregateType = []byte("注文")
	row.Headers = []byte(`{"tenant":"東京🗼","💡":"idea"}`)
	rec, err := newRouter(t, nil).Route(row, testTxn())
	require.NoError(t, err)
	assert.Equal(t, key, rec.Key)
	assert.Equal(t, payload, rec.Value)
	assert.Contains(t, rec.Headers, kgo.RecordHeader{Key: "aggregate_type", Value: []byte("注文")})
	assert.Contains(t, rec.Headers, kgo.RecordHeader{Key: "tenant", Value: []byte("東京🗼")})
	assert.Contains(t, rec.Headers, kgo.RecordHeader{Key: "💡", Value: []byte("idea")})
	// 4-byte characters in the key are hashed as their UTF-8 bytes.
	assert.Equal(t, PartitionFor(key, 12), PartitionFor(rec.Key, 12))

	// An emoji event_type cannot be in a topic name: a row error, not a crash.
	row.EventType = []byte("Order🦄")
	_, err = newRouter(t, nil).Route(row, testTxn())
	requireKind(t, err, KindInvalidTopic)
}

func TestRequireUUID(t *testing.T) {
	tests := []struct {
		id   string
		uuid bool
	}{
		{testEventID, true},
		{strings.ToUpper(testEventID), true},
		{"00000000-0000-0000-0000-000000000000", true},
		{"3f2c8a4e9b1d4c6e8f0a1b2c3d4e5f60", false}, // no hyphens
		{"{3f2c8a4e-9b1d-4c6e-8f0a-1b2c3d4e5f60}", false},
		{"urn:uuid:3f2c8a4e-9b1d-4c6e-8f0a-1b2c3d4e5f60", false},
		{"3f2c8a4e-9b1d-4c6e-8f0a-1b2c3d4e5f6g", false},
		{"3f2c8a4e-9b1d-4c6e-8f0a1-b2c3d4e5f60", false},
		{"3f2c8a4e-9b1d-4c6e-8f0a-1b2c3d4e5f6", false},
		{"evt-1", false},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			row := testRow()
			row.EventID = []byte(tt.id)
			_, err := newRouter(t, nil).Route(row, testTxn())
			if tt.uuid {
				require.NoError(t, err)
			} else {
				requireKind(t, err, KindInvalidEventID)
			}
			_, err = newRouter(t, func(c *Config) { c.RequireUUID = false }).Route(row, testTxn())
			require.NoError(t, err, "any non-empty event_id passes without RequireUUID")
		})
	}
}

func TestAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: allocation counts")
	}
	r := newRouter(t, nil)
	row := testRow()
	row.AggregateType = []byte("Order")
	row.SchemaVersion = []byte("3")
	txn := testTxn()
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := r.Route(row, txn); err != nil {
			t.Fatal(err)
		}
	})
	assert.LessOrEqual(t, allocs, 2.0, "record and header slice only, for rows of one transaction")

	var seq int
	allocs = testing.AllocsPerRun(1000, func() {
		seq++
		txn := &binlog.Txn{GTID: "0-1-" + strconv.Itoa(seq)}
		if _, err := r.Route(row, txn); err != nil {
			t.Fatal(err)
		}
	})
	// One more for the Txn and GTID string made here, one for binlog_gtid.
	assert.LessOrEqual(t, allocs, 5.0)
}

func TestCachesAreBounded(t *testing.T) {
	r := newRouter(t, func(c *Config) { c.TopicTemplate = "{aggregate_type}.{event_type}" })
	row := testRow()
	row.AggregateType = []byte("Order")
	for i := range 3 * maxCacheEntries {
		row.EventType = []byte("E" + strconv.Itoa(i))
		row.Headers = []byte(`{"k` + strconv.Itoa(i) + `":1}`)
		rec, err := r.Route(row, testTxn())
		require.NoError(t, err)
		require.Equal(t, "Order.E"+strconv.Itoa(i), rec.Topic)
		require.Equal(t, "k"+strconv.Itoa(i), rec.Headers[len(rec.Headers)-2].Key)
		require.LessOrEqual(t, len(r.topics), maxCacheEntries)
		require.LessOrEqual(t, len(r.keys), maxCacheEntries)
	}
}

// requireKind asserts err is a *RowError of kind k that matches its sentinel.
func requireKind(t *testing.T, err error, k Kind) *RowError {
	t.Helper()
	require.Error(t, err)
	var re *RowError
	require.True(t, errors.As(err, &re), "error %T is not a *RowError: %v", err, err)
	require.Equal(t, k, re.Kind, "error: %v", err)
	require.ErrorIs(t, err, sentinels[k])
	return re
}

var sentinels = map[Kind]error{
	KindNullAggregateID:    ErrNullAggregateID,
	KindNullEventType:      ErrNullEventType,
	KindNullEventID:        ErrNullEventID,
	KindInvalidEventID:     ErrInvalidEventID,
	KindInvalidPayloadJSON: ErrInvalidPayloadJSON,
	KindInvalidHeaders:     ErrInvalidHeaders,
	KindInvalidTopic:       ErrInvalidTopic,
	KindInvalidExtension:   ErrInvalidExtension,
}
