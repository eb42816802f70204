package binlog

import (
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/binlog-router/binlog-router/internal/schema"
)

// Config configures a Reader. Zero values take the defaults noted.
type Config struct {
	Addr     string      // host:port of the MySQL/MariaDB server
	User     string      // replication user
	Password string      // its password (never logged)
	TLS      *tls.Config // nil: plain TCP
	ServerID uint32      // replica server id, unique among the server's replicas; default DefaultServerID

	Tables  []schema.TableName // outbox tables; at least one
	Columns schema.Columns     // outbox column names

	// UUIDBinary is how a 16-byte binary event id (BINARY(16),
	// VARBINARY) holds a UUID (--uuid-binary-layout); default
	// DefaultUUIDBinary. MariaDB's UUID type is always read in text order.
	UUIDBinary UUIDBinary
	// DatetimeZone is the time zone of DATETIME created_at values
	// (--datetime-zone); nil: the server's (Server.DatetimeZone).
	DatetimeZone *time.Location

	// CheckPayloadJSON has the reader check each outbox row's payload for
	// one JSON value in UTF-8 (jsonscan.Valid) while it decodes the row,
	// and set OutboxRow.PayloadJSON when it is, so that what requires JSON
	// (the route under --validate-json) need not read the payload again.
	// For a UTF-8 text column a payload that passes skips the reader's
	// UTF-8 check, which the JSON check includes; one that fails gets the
	// UTF-8 check as without this setting.
	CheckPayloadJSON bool

	OnUpdate UpdatePolicy // UPDATE of an outbox row; default DefaultOnUpdate
	Observer Observer     // counts; default no-op
	// Guard, if set, sees the rows events and statements of every other
	// table (see TableGuard); default none.
	Guard TableGuard

	// EventCache is how many parsed binlog events may wait between the
	// network reader and the stream (go-mysql's EventCacheCount); with the
	// queue limits it bounds the reader's memory. Default
	// DefaultEventCache.
	EventCache int

	// Heartbeat is the period at which an idle server sends heartbeats.
	// A connection silent for three periods is considered dead. Default 1s.
	Heartbeat time.Duration
	// Backoff bounds the wait between reconnects: it starts at BackoffMin
	// and doubles up to BackoffMax. Defaults 100ms and 5s.
	BackoffMin, BackoffMax time.Duration
	// ReconnectTimeout stops the reader when no connection succeeds for
	// this long; 0 retries forever.
	ReconnectTimeout time.Duration

	Logger zerolog.Logger
}

// The defaults of Config: the one definition of each, which the command
// line's flag table (internal/config) takes too.
const (
	DefaultServerID   = 1001
	DefaultOnUpdate   = UpdateWarn
	DefaultUUIDBinary = UUIDStandard
	DefaultEventCache = 16
)

// setDefaults sets every field left zero to its default.
func (c *Config) setDefaults() {
	if c.ServerID == 0 {
		c.ServerID = DefaultServerID
	}
	if c.OnUpdate == "" {
		c.OnUpdate = DefaultOnUpdate
	}
	if c.UUIDBinary == "" {
		c.UUIDBinary = DefaultUUIDBinary
	}
	if c.Observer == nil {
		c.Observer = nopObserver{}
	}
	if c.EventCache <= 0 {
		c.EventCache = DefaultEventCache
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = time.Second
	}
	if c.BackoffMin <= 0 {
		c.BackoffMin = 100 * time.Millisecond
	}
	if c.BackoffMax <= 0 {
		c.BackoffMax = 5 * time.Second
	}
}

func (c *Config) validate() error {
	if c.Addr == "" {
		return errors.New("no server address: set --mysql-addr host:port")
	}
	if len(c.Tables) == 0 {
		return errors.New("no outbox table: set --outbox-table db.table")
	}
	if c.OnUpdate != UpdateWarn && c.OnUpdate != UpdateFail {
		return fmt.Errorf("invalid update policy %q: use warn or fail", c.OnUpdate)
	}
	if c.UUIDBinary != UUIDStandard && c.UUIDBinary != UUIDSwapped {
		return fmt.Errorf("invalid UUID binary layout %q: use standard or swapped", c.UUIDBinary)
	}
	return c.Columns.Validate()
}
