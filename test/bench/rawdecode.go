package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

// rawDecodeResult is go-mysql alone reading the backlog.
type rawDecodeResult struct {
	Rows       int     `json:"rows"`
	Txns       int     `json:"transactions"`
	Seconds    float64 `json:"seconds"`
	RowsPerSec float64 `json:"rows_per_second"`
	CPU        cpuUse  `json:"cpu_during_run"`
}

// rawDecode replicates the binlog from bl.Start to bl.End with go-mysql's
// BinlogSyncer, configured as internal/binlog configures it (flavor,
// charset, ParseTime, JSON as text, event cache, heartbeat, and decoding
// the row data of outbox INSERTs only), and counts the outbox rows. No
// routing, no Kafka: the decoding limit on this backlog.
func rawDecode(ctx context.Context, addr string, serverID uint32, bl backlog) (rawDecodeResult, error) {
	var res rawDecodeResult
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return res, fmt.Errorf("raw decode: address %q: %w", addr, err)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return res, fmt.Errorf("raw decode: port in %q: %w", addr, err)
	}
	start, err := gomysql.ParseGTIDSet(gomysql.MariaDBFlavor, bl.Start.String())
	if err != nil {
		return res, fmt.Errorf("raw decode: start position %s: %w", bl.Start, err)
	}
	isOutbox := func(e *replication.RowsEvent) bool {
		return string(e.Table.Schema) == benchDB && string(e.Table.Table) == outboxTable
	}

	began := time.Now()
	syncer := replication.NewBinlogSyncer(replication.BinlogSyncerConfig{
		ServerID:              serverID,
		Flavor:                gomysql.MariaDBFlavor,
		Host:                  host,
		Port:                  uint16(port),
		User:                  "root",
		Charset:               "utf8mb4",
		ParseTime:             true,
		RenderJSONAsMySQLText: true,
		HeartbeatPeriod:       time.Second,
		DisableRetrySync:      true,
		DiscardGTIDSet:        true,
		EventCacheCount:       16, // the router's --event-cache default
		Logger:                slog.New(slog.DiscardHandler),
		RowsEventDecodeFunc: func(e *replication.RowsEvent, data []byte) error {
			pos, err := e.DecodeHeader(data)
			if err != nil {
				return err
			}
			if e.Type() != replication.EnumRowsEventTypeInsert || !isOutbox(e) {
				return nil
			}
			return e.DecodeData(pos, data)
		},
	})
	defer syncer.Close()
	streamer, err := syncer.StartSyncGTID(start)
	if err != nil {
		return res, fmt.Errorf("raw decode: starting replication: %w", err)
	}
	cur := position{}
	// One deadline for the whole read: a timer per event would cost the
	// baseline CPU the router does not spend (it uses a watchdog).
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	for {
		ev, err := streamer.GetEvent(ctx)
		if err != nil {
			return res, fmt.Errorf("raw decode: after %d rows: %w", res.Rows, err)
		}
		commit := false
		switch e := ev.Event.(type) {
		case *replication.MariadbGTIDEvent:
			cur[e.GTID.DomainID] = gtidEntry{server: e.GTID.ServerID, seq: e.GTID.SequenceNumber}
		case *replication.RowsEvent:
			if e.Type() == replication.EnumRowsEventTypeInsert && isOutbox(e) {
				res.Rows += len(e.Rows)
			}
		case *replication.XIDEvent:
			commit = true
			res.Txns++
		}
		if commit && cur.covers(bl.End) {
			break
		}
	}
	elapsed := time.Since(began)
	res.Seconds = elapsed.Seconds()
	res.RowsPerSec = float64(res.Rows) / elapsed.Seconds()
	if res.Rows != bl.Rows {
		return res, fmt.Errorf("raw decode: read %d outbox rows, the backlog has %d", res.Rows, bl.Rows)
	}
	return res, nil
}
