package test

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// replayProxy forwards TCP connections to a MariaDB server and makes every
// binlog dump that passes through it start at the beginning of the
// server's oldest binlog, whatever position the replica asked for: it
// rewrites the query SET @slave_connect_state='...', which a MariaDB
// replica sends before COM_BINLOG_DUMP, to the GTID state the oldest
// binlog starts with. The server then streams its whole binlog on every
// connection, as a source that ignores the requested position does (Dolt
// without BINLOG_THROUGH_GTID, a proxy, a failover gone wrong). Other
// traffic passes unchanged; the connections must not use TLS or
// compression.
type replayProxy struct {
	ln     net.Listener
	target string
	state  string // the position every dump is moved to

	rewrites atomic.Int64 // dumps moved
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	wg       sync.WaitGroup
}

// newReplayProxy listens on a free loopback port, forwards to target and
// moves every dump to state; it is closed when the test ends.
func newReplayProxy(t testing.TB, target, state string) *replayProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &replayProxy{ln: ln, target: target, state: state, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *replayProxy) addr() string { return p.ln.Addr().String() }

func (p *replayProxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *replayProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *replayProxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		if !p.track(client) || !p.track(server) {
			_ = client.Close()
			_ = server.Close()
			return
		}
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			_, _ = io.Copy(client, server)
			_ = client.Close()
		}()
		go func() {
			defer p.wg.Done()
			_ = p.forward(server, client)
			_ = server.Close()
		}()
	}
}

// connectState is the start of the query a MariaDB replica sets its start
// position with, as a COM_QUERY payload (command byte 0x03).
var connectState = []byte("\x03SET @slave_connect_state=")

// forward copies the client's packets to the server, packet by packet
// (3-byte length, sequence number, payload), rewriting the start position.
func (p *replayProxy) forward(server, client net.Conn) error {
	var hdr [4]byte
	for {
		if _, err := io.ReadFull(client, hdr[:]); err != nil {
			return err
		}
		n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
		payload := make([]byte, n)
		if _, err := io.ReadFull(client, payload); err != nil {
			return err
		}
		if bytes.HasPrefix(payload, connectState) {
			payload = []byte("\x03SET @slave_connect_state='" + p.state + "'")
			p.rewrites.Add(1)
			if len(payload) >= 1<<24-1 {
				return errors.New("rewritten query too long")
			}
			binary.LittleEndian.PutUint16(hdr[:2], uint16(len(payload)))
			hdr[2] = byte(len(payload) >> 16)
		}
		if _, err := server.Write(append(hdr[:], payload...)); err != nil {
			return err
		}
	}
}

// oldestBinlogState is the GTID state at the start of the server's oldest
// binlog (its Gtid_list event): a dump started there streams everything
// the server still has.
func oldestBinlogState(t testing.TB, db *sql.DB) string {
	t.Helper()
	var file string
	if err := db.QueryRow("SHOW BINARY LOGS").Scan(&file, new(any)); err != nil {
		t.Fatalf("SHOW BINARY LOGS: %v", err)
	}
	rows, err := db.Query("SHOW BINLOG EVENTS IN '" + file + "' LIMIT 5")
	if err != nil {
		t.Fatalf("SHOW BINLOG EVENTS: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var typ, info string
		if err := rows.Scan(new(any), new(any), &typ, new(any), new(any), &info); err != nil {
			t.Fatalf("SHOW BINLOG EVENTS: %v", err)
		}
		if typ == "Gtid_list" {
			return strings.Trim(info, "[]")
		}
	}
	t.Fatalf("no Gtid_list event at the start of %s", file)
	return ""
}
