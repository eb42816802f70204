package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/gtid"
)

// rawDumpConfig is the dump connection of rawDump.
type rawDumpConfig struct {
	Addr       string      // host:port of the server
	User       string      // a user with REPLICATION SLAVE
	Password   string      // its password
	ServerID   uint32      // the connection's replica server id, unique on the server
	Flavor     gtid.Flavor // the server's flavor
	Start      string      // the GTID set to stream after, in the server's syntax
	EventCache int         // go-mysql's event channel; default binlog.DefaultEventCache, as --event-cache
}

// rawEvent is one binlog event as the server sent it: its header fields and
// size; its body is not parsed.
type rawEvent struct {
	Type   byte   // the event type code
	LogPos uint32 // the position after the event in its binlog file
	Size   int    // bytes, header and checksum included
}

// IsXID reports whether e is an XID event: the commit of a transaction of a
// transactional engine.
func (e rawEvent) IsXID() bool { return e.Type == byte(replication.XID_EVENT) }

// rawDump streams the binlog after cfg.Start over one dump connection with
// go-mysql in raw mode: every event's header is read and its checksum
// verified, and nothing else is parsed (no GTID, table map or rows event
// is decoded). It calls fn for every event until fn returns false (rawDump
// then returns nil), ctx ends, or the connection fails. It measures the
// limit of the source side, the transport alone: the router itself
// always parses. It is the benchmark's own use of go-mysql, the one
// allowed outside internal/binlog.
func rawDump(ctx context.Context, cfg rawDumpConfig, fn func(rawEvent) bool) error {
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
		cfg.EventCache = binlog.DefaultEventCache
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
		if !fn(rawEvent{Type: byte(ev.Header.EventType), LogPos: ev.Header.LogPos, Size: len(ev.RawData)}) {
			return nil
		}
	}
}
