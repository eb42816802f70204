package test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/route"
	"github.com/binlog-router/binlog-router/test/harness"
)

// pollingPartitions is the partition count of the topics in
// TestRecoverPolling: more than one, so that a partitioner that differs
// from the router's would show.
const pollingPartitions = 3

// buildPoller builds examples/polling-migration into a directory of the
// test.
func buildPoller(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "polling-migration")
	cmd := exec.Command("go", "build", "-o", bin, "../examples/polling-migration")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "building examples/polling-migration: %s", out)
	return bin
}

// poller is the example's polling relay running as a process.
type poller struct {
	cmd  *exec.Cmd
	out  *harness.LockedBuffer
	done chan struct{}
}

// startPoller runs the polling relay bin with args; it is killed when the
// test ends, and its output shown if the test failed.
func startPoller(t *testing.T, bin string, args ...string) *poller {
	t.Helper()
	p := &poller{cmd: exec.Command(bin, args...), out: &harness.LockedBuffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, p.cmd.Start())
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("poller output:\n%s", harness.Tail(p.out.String(), 3000))
		}
	})
	return p
}

func (p *poller) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// kill SIGKILLs the relay and waits for it to end.
func (p *poller) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// TestRecoverPolling: an application inserts outbox rows continuously
// into a table with a status column while the example polling relay
// (examples/polling-migration) publishes them; the relay is SIGKILLed,
// rows keep coming, then `recover --where "status <> 'SENT'"` and `run`
// take over. A read_committed consumer reads every row exactly once, on
// the partition the router's partitioner gives its key, whichever side
// published it. Each subtest kills the relay at a random moment; in
// between_produce_and_mark the moment is always inside the relay's crash
// window (a batch acknowledged by Kafka but not marked SENT), which
// recover must not publish again.
func TestRecoverPolling(t *testing.T) {
	bin := buildPoller(t)
	t.Run("at_random", func(t *testing.T) { testRecoverPolling(t, bin, false) })
	t.Run("between_produce_and_mark", func(t *testing.T) { testRecoverPolling(t, bin, true) })
}

func testRecoverPolling(t *testing.T, bin string, inWindow bool) {
	rng := harness.FaultRand(t)
	e := harness.NewEnv(t, harness.EnvOpts{})
	const name = "recover-polling"
	args := e.Args(name)
	t.Logf("broker %s", e.BrokerName())
	e.Exec("ALTER TABLE outbox ADD COLUMN status VARCHAR(8) NOT NULL DEFAULT 'NEW', ADD INDEX status_id (status, id)")
	for _, typ := range []string{"Created", "Changed"} {
		_, err := e.Admin().CreateTopic(t.Context(), pollingPartitions, 1, nil, e.Prefix+"."+typ)
		require.NoError(t, err)
	}
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	l := harness.StartLoad(t, harness.NewWriter(e.DB, rng, "agg", 30, 0), 300)

	batch := 5 + rng.IntN(46)
	pargs := []string{"-dsn", e.Maria.DSN(e.DBName), "-brokers", strings.Join(e.Kafka.Brokers, ","),
		"-table", "outbox", "-topic-template", e.Prefix + ".{event_type}",
		"-batch", fmt.Sprint(batch), "-interval", "20ms"}
	if inWindow {
		pause := 5 + rng.IntN(20)
		pargs = append(pargs, "-pause-before-mark", fmt.Sprint(pause))
		t.Logf("relay: batches of %d rows, paused before marking batch %d SENT, then killed", batch, pause)
		p := startPoller(t, bin, pargs...)
		harness.Eventually(t, time.Minute, "the relay pauses before marking a batch", func() bool {
			return strings.Contains(p.out.String(), "paused before marking them SENT") || !p.running()
		})
		require.True(t, p.running(), "relay exited:\n%s", p.out.String())
		p.kill()
	} else {
		after := 200 + rng.IntN(600)
		delay := harness.RandDur(rng, 0, 500*time.Millisecond)
		t.Logf("relay: batches of %d rows, killed %s after %d events were read", batch, delay, after)
		p := startPoller(t, bin, pargs...)
		harness.Eventually(t, time.Minute, "the relay publishes", func() bool { return col.Distinct() >= after || !p.running() })
		require.True(t, p.running(), "relay exited:\n%s", p.out.String())
		time.Sleep(delay) // the random moment of the kill
		p.kill()
	}

	// What the relay left: every row marked SENT is in Kafka; some rows
	// may be in Kafka but still NEW.
	sent, pending := statusIDs(e)
	polled := col.Settle(t, time.Second)
	byRelay := map[string]bool{}
	for _, d := range polled {
		byRelay[d.ID] = true
	}
	unmarked := 0
	for id := range pending {
		if byRelay[id] {
			unmarked++
		}
	}
	for id := range sent {
		assert.True(t, byRelay[id], "event %s marked SENT is in Kafka", id)
	}
	assert.Len(t, byRelay, len(sent)+unmarked, "the relay published exactly the rows SENT and the unmarked ones")
	if inWindow {
		assert.Positive(t, unmarked, "the killed batch is in Kafka and still NEW")
	}
	t.Logf("at the kill: %d rows published by the relay (%d of them not marked SENT), %d pending", len(byRelay), unmarked, len(pending))

	// Rows keep coming while the router takes over.
	from := l.Rows.Load()
	harness.Eventually(t, time.Minute, "rows committed after the kill", func() bool { return l.Rows.Load() >= from+100 })
	res := recoverRun(t, args, "--where", "status <> 'SENT'")
	require.Equal(t, 0, res.Code, "recover: %s", harness.Tail(res.Stderr, 3000))
	window, known, published, snap := recoverTotals(t, res)
	assert.Equal(t, unmarked, known, "recover finds in Kafka the rows the relay published but did not mark")
	assert.Equal(t, window-known, published)
	assert.Equal(t, snap, e.CheckpointSet(name))

	r := harness.StartRouter(t, args...)
	col.WaitProgress(t, r, published+100, time.Minute, "recovered and streamed rows")
	l.Stop()
	want := harness.CommittedRows(t, e.DB)
	col.WaitAll(t, want, time.Minute)
	got := col.Settle(t, 2*time.Second)
	require.Equal(t, 0, r.Stop(30*time.Second))
	v := harness.CheckDelivery(t, want, got, nil)

	streamed, recovered := 0, 0
	var misplaced []string
	for _, d := range got {
		row := want[d.ID]
		if p := int32(route.PartitionFor([]byte(d.Key), pollingPartitions)); d.Topic != e.Prefix+"."+row.Type || d.Partition != p {
			misplaced = append(misplaced, fmt.Sprintf("%s (key %s, type %s) on %s/%d, want partition %d", d.ID, d.Key, row.Type, d.Topic, d.Partition, p))
		}
		switch {
		case d.GTID != "":
			streamed++
		case !byRelay[d.ID]:
			recovered++
		}
	}
	if len(misplaced) > 0 {
		t.Errorf("%d records on another topic or partition than the router's, e.g. %v", len(misplaced), misplaced[:min(len(misplaced), 5)])
	}
	assert.Equal(t, published, recovered, "records recover published")
	assert.Positive(t, streamed, "rows streamed by run")
	t.Logf("%d rows: %d published by the relay (%d pending at the kill, %d of them already published), "+
		"recover: %d in the window, %d already in Kafka, %d published; %d streamed by run; %s",
		len(want), len(byRelay), len(pending), unmarked, window, known, recovered, streamed, v)
	t.Logf("load: %s", l)
}

// statusIDs are the event ids of the outbox rows marked SENT and of the
// others.
func statusIDs(e *harness.Env) (sent, pending map[string]bool) {
	e.T.Helper()
	rows, err := e.DB.Query("SELECT CAST(event_id AS CHAR), status FROM outbox")
	require.NoError(e.T, err)
	defer rows.Close()
	sent, pending = map[string]bool{}, map[string]bool{}
	for rows.Next() {
		var id, status string
		require.NoError(e.T, rows.Scan(&id, &status))
		if status == "SENT" {
			sent[id] = true
		} else {
			pending[id] = true
		}
	}
	require.NoError(e.T, rows.Err())
	return sent, pending
}
