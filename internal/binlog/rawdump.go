package binlog

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlog-router/binlog-router/internal/gtid"
)

// RawDumpConfig is the dump connection of RawDump.
type RawDumpConfig struct {
	Addr       string      // host:port of the server
	User       string      // a user with REPLICATION SLAVE
	Password   string      // its password
	ServerID   uint32      // the connection's replica server id, unique on the server
	Flavor     gtid.Flavor // the server's flavor
	Start      string      // the GTID set to stream after, in the server's syntax
	EventCache int         // go-mysql's event channel; default DefaultEventCache, as --event-cache
}

// RawEvent is one binlog event as the server sent it: its header fields and
// size; its body is not parsed.
type RawEvent struct {
	Type   byte   // the event type code
	LogPos uint32 // the position after the event in its binlog file
	Size   int    // bytes, header and checksum included
}

// IsXID reports whether e is an XID event: the commit of a transaction of a
// transactional engine.
func (e RawEvent) IsXID() bool { return e.Type == byte(replication.XID_EVENT) }

// RawDump streams the binlog after cfg.Start over one dump connection with
// go-mysql in raw mode: every event's header is read and its checksum
// verified, and nothing else is parsed (no GTID, table map or rows event
// is decoded). It calls fn for every event until fn returns false (RawDump
// then returns nil), ctx ends, or the connection fails. It measures the
// limit of the source side, the transport alone (test/bench): the router
// itself always parses.
func RawDump(ctx context.Context, cfg RawDumpConfig, fn func(RawEvent) bool) error {
	host, portText, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return fmt.Errorf("raw dump: server address %q: %w", cfg.Addr, err)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return fmt.Errorf("raw dump: port in %q: %w", cfg.Addr, err)
	}
	start, err := gomysql.ParseGTIDSet(string(cfg.Flavor), cfg.Start)
	if err != nil {
		return fmt.Errorf("raw dump: start %q: %w", cfg.Start, err)
	}
	if cfg.EventCache <= 0 {
		cfg.EventCache = DefaultEventCache
	}
	syncer := replication.NewBinlogSyncer(replication.BinlogSyncerConfig{
		ServerID:         cfg.ServerID,
		Flavor:           string(cfg.Flavor),
		Host:             host,
		Port:             uint16(port),
		User:             cfg.User,
		Password:         cfg.Password,
		Charset:          "utf8mb4",
		RawModeEnabled:   true,
		DisableRetrySync: true,
		DiscardGTIDSet:   true,
		EventCacheCount:  cfg.EventCache,
		Logger:           slog.New(slog.DiscardHandler),
	})
	defer syncer.Close()
	streamer, err := syncer.StartSyncGTID(start)
	if err != nil {
		return fmt.Errorf("raw dump: starting replication: %w", err)
	}
	for {
		ev, err := streamer.GetEvent(ctx)
		if err != nil {
			return fmt.Errorf("raw dump: %w", err)
		}
		if !fn(RawEvent{Type: byte(ev.Header.EventType), LogPos: ev.Header.LogPos, Size: len(ev.RawData)}) {
			return nil
		}
	}
}
