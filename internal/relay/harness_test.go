package relay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/pipeline"
	"github.com/binlog-router/binlog-router/internal/route"
)

// harness runs a Relay over a fakeSource and a fakeKafka inside a
// synctest bubble: time stands still until every goroutine waits, so
// intervals, lingers and timeouts are exact.
type harness struct {
	t      *testing.T
	src    *fakeSource
	kafka  *fakeKafka
	r      *Relay
	start  time.Time
	cancel context.CancelFunc
	exited chan struct{} // closed when Run returned
	err    error         // Run's error
}

// newHarness builds the relay with cfg changed by mod; call it inside
// synctest.Test.
func newHarness(t *testing.T, mod func(*Config)) *harness {
	t.Helper()
	cfg := Config{Kafka: []kgo.Opt{kgo.SeedBrokers("fake:9092")}, Config: pipeline.Config{Route: route.DefaultConfig(), Logger: zerolog.Nop()}}
	if mod != nil {
		mod(&cfg)
	}
	src := newFakeSource()
	r, err := newRelay(cfg, src)
	if err != nil {
		t.Fatal(err)
	}
	k := newFakeKafka(&r.cfg)
	r.cluster = k
	return &harness{t: t, src: src, kafka: k, r: r}
}

// run starts Relay.Run; the test's end stops it.
func (h *harness) run() {
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan struct{})
	h.cancel, h.exited, h.start = cancel, exited, time.Now()
	r := h.r
	go func() {
		defer close(exited)
		h.err = r.Run(ctx)
	}()
	h.t.Cleanup(func() {
		cancel()
		<-exited
	})
}

// wait returns Run's error once it returned by itself; a Run that goes
// on fails the test after a minute of bubble time.
func (h *harness) wait() error {
	h.t.Helper()
	select {
	case <-h.exited:
		return h.err
	case <-time.After(time.Minute):
		h.t.Fatalf("Run goes on; committed %v", h.kafka.txns())
		return nil
	}
}

// stop cancels Run and returns its error.
func (h *harness) stop() error {
	h.cancel()
	return h.wait()
}

// restart runs a new Relay (a new process) on the same source and Kafka.
func (h *harness) restart() {
	r, err := newRelay(h.r.cfg, h.src)
	if err != nil {
		h.t.Fatal(err)
	}
	r.cluster = h.kafka
	h.r = r
	h.run()
}

// await waits, in bubble time, until cond holds; a relay that never gets
// there fails the test after a minute of bubble time.
func (h *harness) await(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for synctest.Wait(); !cond(); synctest.Wait() {
		if time.Now().After(deadline) {
			h.t.Fatalf("waiting for %s: not after a minute; committed %v", what, h.kafka.txns())
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// settle lets every goroutine run until it waits.
func (h *harness) settle() { synctest.Wait() }

// committedIDs waits until n event ids are committed and returns them.
func (h *harness) committedIDs(n int) []string {
	h.t.Helper()
	h.await(fmt.Sprintf("%d committed records", n), func() bool { return len(h.kafka.ids()) >= n })
	return h.kafka.ids()
}

// checkCommitted checks every committed Kafka transaction: the records so
// far are the source's first rows in binlog order, each once, and the
// checkpoint of each transaction names exactly the position after them.
func (h *harness) checkCommitted() {
	h.t.Helper()
	h.src.mu.Lock()
	events := slices.Clone(h.src.events)
	h.src.mu.Unlock()
	var rows []fakeEvent // the binlog's outbox rows, in order
	for _, e := range events {
		if e.id != 0 {
			rows = append(rows, e)
		}
	}
	n := 0
	for i, txn := range h.kafka.txns() {
		for _, id := range txn.ids {
			if n >= len(rows) || id != eventID(rows[n].id) {
				h.t.Fatalf("Kafka transaction %d: record %s is not the binlog's row %d (committed %v)", i, id, n, h.kafka.txns())
			}
			n++
		}
		if txn.checkpoint == nil {
			h.t.Fatalf("Kafka transaction %d carries no checkpoint", i)
		}
		if got := covered(h.t, txn.checkpoint, rows); got != n {
			h.t.Errorf("Kafka transaction %d: checkpoint %s (txn %s, %d rows) covers %d rows; %d are committed",
				i, txn.checkpoint.GTIDSet, txn.checkpoint.TxnGTID, txn.checkpoint.TxnRows, got, n)
		}
	}
}

// covered counts the rows before the position cp names.
func covered(t *testing.T, cp *checkpoint.Checkpoint, rows []fakeEvent) int {
	t.Helper()
	set, err := gtid.Parse(gtid.MariaDB, cp.GTIDSet)
	if err != nil {
		t.Fatal(err)
	}
	n, inTxn := 0, 0
	for _, r := range rows {
		one := gtid.New(gtid.MariaDB)
		if err := one.Add(r.gtid); err != nil {
			t.Fatal(err)
		}
		switch {
		case set.Contains(one):
			n++
		case r.gtid == cp.TxnGTID && inTxn < cp.TxnRows:
			n++
			inTxn++
		}
	}
	return n
}

// sizes returns the number of records of each committed transaction.
func sizes(txns []fakeTxn) []int {
	var out []int
	for _, t := range txns {
		out = append(out, len(t.ids))
	}
	return out
}

func ids(ns ...int) []string {
	var out []string
	for _, n := range ns {
		out = append(out, eventID(n))
	}
	return out
}

func mustNoError(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func mustIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want %v", err, target)
	}
}
