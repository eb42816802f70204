package test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/test/harness"
)

// replayedWarning begins the reader's log line for a run of transactions
// the server sent although the router already had them.
const replayedWarning = "the binlog server sent transactions the GTID set it was asked to start after already contains"

// TestSourceIgnoringResumePosition: the router reads MariaDB through a
// proxy that moves every binlog dump to the start of the oldest binlog, so
// that the server streams everything again on every connection, as a
// source that ignores the requested GTID position does. After a lost
// connection, after a restart from the checkpoint and after one from a
// checkpoint inside a transaction, a read_committed consumer still reads
// every event exactly once; each run of transactions
// sent again is logged once (WARN, naming the server and the range) and
// counted in binlog_router_binlog_transactions_skipped_total. A replay
// longer than binlog.MaxReplayedRun transactions stops the router with
// exit code 2 and an error naming the server.
func TestSourceIgnoringResumePosition(t *testing.T) {
	rng := harness.FaultRand(t)
	e := harness.NewEnv(t, harness.EnvOpts{})
	proxy := newReplayProxy(t, e.Maria.Addr(), oldestBinlogState(t, e.DB))
	args := harness.ArgsWith(e.Args("replayed", "--metrics-addr", "127.0.0.1:0", "--commit-records", "100"), "--mysql-addr", proxy.addr())
	r := harness.StartRouter(t, args...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	app := harness.NewWriter(e.DB, rng, "agg", 10, 0)
	write := func(txns int) {
		t.Helper()
		for range txns {
			if err := app.Tx(context.Background(), 1+rng.IntN(3)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// delivered waits until every committed row was read, and checks
	// that none was read twice.
	delivered := func(what string) harness.Verdict {
		t.Helper()
		want := harness.CommittedRows(t, e.DB)
		col.WaitAll(t, want, time.Minute)
		r.MustRun(what)
		v := harness.CheckDelivery(t, want, col.Settle(t, time.Second), nil)
		t.Logf("%s: %s", what, v)
		return v
	}
	var server string
	if err := e.DB.QueryRow("SELECT VERSION()").Scan(&server); err != nil {
		t.Fatal(err)
	}

	write(30)
	delivered("first connection")
	if proxy.rewrites.Load() == 0 {
		t.Fatal("no binlog dump passed through the proxy")
	}

	// A lost connection: the reader asks for the set it has handed over,
	// the server sends its whole binlog again.
	killDump(t, e)
	write(30)
	delivered("after a lost connection")
	checkReplayedRuns(t, r, proxy.addr(), server, 1)

	// A restart: the new process asks for its checkpoint's set.
	if code := r.Stop(30 * time.Second); code != 0 {
		t.Fatalf("SIGTERM: exit code %d, want 0", code)
	}
	r.Restart()
	write(30)
	delivered("after a restart from the checkpoint")
	checkReplayedRuns(t, r, proxy.addr(), server, 1)

	// A restart from a checkpoint inside a transaction: killed while a
	// 20,000-row transaction is produced 100 records per Kafka
	// transaction. That transaction is not in the checkpoint's set: the
	// new process reads it again and skips the rows already published.
	from := col.Distinct()
	if err := app.Tx(context.Background(), 20000); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, time.Minute, "the first records of the large transaction", func() bool { return col.Distinct() > from || !r.Running() })
	r.Kill()
	r.Restart()
	resumed := ""
	harness.Eventually(t, 30*time.Second, "the restarted router's start", func() bool {
		resumed = harness.LineWith(r.Out.String()[r.Mark:], "resuming from checkpoint")
		return resumed != ""
	})
	if m := regexp.MustCompile(`"txn_rows":(\d+)`).FindStringSubmatch(resumed); m != nil {
		t.Logf("killed inside the large transaction: the checkpoint covered %s of its rows", m[1])
	} else {
		t.Errorf("the kill did not land inside the large transaction (%d of its rows read): %s", col.Distinct()-from, resumed)
	}
	delivered("after a restart inside a transaction")
	checkReplayedRuns(t, r, proxy.addr(), server, 1)
	t.Logf("binlog dumps moved to the oldest binlog by the proxy: %d", proxy.rewrites.Load())

	// A history longer than the bound: the next connection's replay stops
	// the router.
	for range binlog.MaxReplayedRun {
		e.Exec("INSERT INTO orders (customer, total) VALUES ('filler', 1)")
	}
	write(1) // read once the router has read the fillers
	delivered("before the long replay")
	killDump(t, e)
	if code := r.Wait(time.Minute); code != 2 {
		t.Fatalf("a replay past %d transactions: exit code %d, want 2", binlog.MaxReplayedRun, code)
	}
	line := r.LastLogLine("binlog-router stopped")
	for _, want := range []string{fmt.Sprintf("binlog server %s (version %s)", proxy.addr(), server),
		"the server ignores the GTID position it was asked to start from",
		fmt.Sprintf("it sent %d transactions in a row", binlog.MaxReplayedRun+1), "not published again", `"exit_code":2`} {
		if !strings.Contains(line, want) {
			t.Errorf("the stop's log line lacks %q:\n%s", want, line)
		}
	}
	v := harness.CheckDelivery(t, harness.CommittedRows(t, e.DB), col.Settle(t, 2*time.Second), nil)
	t.Logf("after the stop: %s", v)
}

// killDump cuts the router's binlog dump connection and waits for the
// router's next one.
func killDump(t *testing.T, e *harness.Env) {
	t.Helper()
	id := dumpThread(t, e.DB, 0)
	e.Exec(fmt.Sprintf("KILL CONNECTION %d", id))
	dumpThread(t, e.DB, id)
}

// checkReplayedRuns waits until the current router process has logged at
// least want runs of skipped transactions, checks that each names the
// server and its range, and that the skipped transactions metric is the
// sum of the runs.
func checkReplayedRuns(t *testing.T, r *harness.Router, addr, version string, want int) {
	t.Helper()
	out := func() string { return r.Out.String()[r.Mark:] }
	harness.Eventually(t, 30*time.Second, "the log line of a run of skipped transactions", func() bool {
		return strings.Count(out(), replayedWarning) >= want
	})
	total := 0
	for _, line := range strings.Split(out(), "\n") {
		if !strings.Contains(line, replayedWarning) {
			continue
		}
		var run struct {
			Level         string `json:"level"`
			Server        string `json:"server"`
			ServerVersion string `json:"server_version"`
			FirstGTID     string `json:"first_gtid"`
			LastGTID      string `json:"last_gtid"`
			Transactions  int    `json:"transactions"`
		}
		if err := json.Unmarshal([]byte(line), &run); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if run.Level != "warn" || run.Server != addr || run.ServerVersion != version || run.FirstGTID == "" ||
			run.LastGTID == "" || run.Transactions < 30 {
			t.Errorf("a run of skipped transactions logged as %s", line)
		}
		total += run.Transactions
	}
	base := "http://" + currentMetricsAddr(t, r)
	if got := metricValue(t, base, "binlog_router_binlog_transactions_skipped_total"); int(got) != total {
		t.Errorf("binlog_router_binlog_transactions_skipped_total = %v, want %d (the runs logged)", got, total)
	}
	t.Logf("runs of skipped transactions logged: %d, transactions skipped: %d", strings.Count(out(), replayedWarning), total)
}

// currentMetricsAddr is the /metrics address of the current router
// process (metricsAddr finds the first process's).
func currentMetricsAddr(t *testing.T, r *harness.Router) string {
	t.Helper()
	re := regexp.MustCompile(`"metrics_addr":"([^"]+)"`)
	var addr string
	harness.Eventually(t, 30*time.Second, "the router's metrics address", func() bool {
		if m := re.FindStringSubmatch(r.Out.String()[r.Mark:]); m != nil {
			addr = m[1]
		}
		return addr != ""
	})
	return addr
}

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
