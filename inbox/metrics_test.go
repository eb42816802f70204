package inbox_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/inbox"
	"github.com/binlog-router/binlog-router/internal/inboxtest"
)

// TestInboxMetrics reads the consumer's metrics through a Prometheus
// registry: processed, duplicates, retries and dead letters count what
// happened; the lag of each partition is its last stable offset minus the
// next offset to handle, reaches 0 past the transaction markers of
// transactionally produced records (as the router writes them), and its
// series are deleted when the partitions are given up. A second consumer
// of the same name registers on the same registry.
func TestInboxMetrics(t *testing.T) {
	d := inboxtest.MariaDB()
	db := d.OpenInbox(t)
	inboxtest.MustExec(t, db, "CREATE TABLE effects (event_id VARCHAR(64) NOT NULL)")
	k := newKafka(t)
	topic, name := unique("inbox.metrics"), unique("metered")

	// Three transactions: partition 0 gets ev-0..ev-5 and a copy of ev-2,
	// partition 1 gets ev-6..ev-9 and a poison record.
	rec := func(p int32, id string) *kgo.Record {
		return &kgo.Record{Topic: topic, Partition: p, Key: []byte(id), Headers: []kgo.RecordHeader{{Key: "id", Value: []byte(id)}}}
	}
	var txns [][]*kgo.Record
	txns = append(txns, []*kgo.Record{rec(0, "ev-0"), rec(0, "ev-1"), rec(0, "ev-2"), rec(1, "ev-6"), rec(1, "ev-7")})
	txns = append(txns, []*kgo.Record{rec(0, "ev-3"), rec(0, "ev-4"), rec(0, "ev-2"), rec(1, "poison")})
	txns = append(txns, []*kgo.Record{rec(0, "ev-5"), rec(1, "ev-8"), rec(1, "ev-9")})
	produceTransactions(t, k.Brokers, txns)
	ends := inboxtest.EndOffsets(t, k.Brokers, topic)
	t.Logf("end offsets (records and transaction markers) %v", ends)

	reg := prometheus.NewRegistry()
	gate := make(chan struct{})
	handler := func(ctx context.Context, tx *sql.Tx, ev inbox.Event) error {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
		if ev.ID == "poison" {
			return errors.New("poison")
		}
		_, err := tx.ExecContext(ctx, "INSERT INTO effects VALUES (?)", ev.ID)
		return err
	}
	cfg := inbox.Config{
		Brokers: k.Brokers, Topics: []string{topic}, ConsumerName: name,
		DB: db, Dialect: d.Dialect, Handler: handler, Registerer: reg,
		MaxAttempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
		CommitInterval: 50 * time.Millisecond,
	}
	c := inboxtest.Start(t, cfg)
	// The handler holds the first record of each partition: the lag is the
	// whole partition.
	eventually(t, 60*time.Second, "lag reported for both partitions", func() bool {
		return len(metricValues(t, reg, "inbox_lag_records", name)) == 2
	})
	lags := metricValues(t, reg, "inbox_lag_records", name)
	if lags["0"] != float64(ends[0]) || lags["1"] != float64(ends[1]) || c.Stats().Lag != ends[0]+ends[1] {
		t.Errorf("lag before handling %v (Stats %d), want the end offsets %v", lags, c.Stats().Lag, ends)
	}
	close(gate)
	eventually(t, 60*time.Second, "every record handled and the lag at 0", func() bool {
		s := c.Stats()
		lags := metricValues(t, reg, "inbox_lag_records", name)
		return s.Processed+s.Duplicates+s.DeadLetters == 12 && s.Lag == 0 && lags["0"] == 0 && lags["1"] == 0
	})
	// The committed offsets pass the last transaction marker too.
	eventually(t, 30*time.Second, "offsets committed up to the partitions' ends", func() bool {
		offs := committedOffsets(t, k.Brokers, name, topic)
		return offs[0] == ends[0] && offs[1] == ends[1]
	})

	// A second consumer of the same name on the same registry.
	other := cfg
	other.Group = unique("metered-other")
	c2 := inboxtest.Start(t, other)
	eventually(t, 60*time.Second, "the second consumer sees every record as a duplicate or dead letter", func() bool {
		s := c2.Stats()
		return s.Duplicates == 11 && s.DeadLetters == 1
	})
	for _, r := range []*inboxtest.Running{c, c2} {
		if err := r.Stop(t); err != nil {
			t.Fatal(err)
		}
	}

	want := map[string]float64{
		"inbox_processed_total":    10,
		"inbox_duplicates_total":   1 + 11,
		"inbox_retries_total":      2 + 2,
		"inbox_dead_letters_total": 1 + 1,
	}
	for metric, v := range want {
		if got := metricValues(t, reg, metric, name); len(got) != 1 || got[""] != v {
			t.Errorf("%s{consumer=%s} = %v, want %v (both consumers)", metric, name, got, v)
		}
	}
	if st := c.Stats(); st.Processed != 10 || st.Duplicates != 1 || st.Retries != 2 || st.DeadLetters != 1 || st.Lag != 0 {
		t.Errorf("first consumer's stats %+v, want 10 processed, 1 duplicate, 2 retries, 1 dead letter, lag 0", st)
	}
	if got := metricValues(t, reg, "inbox_lag_records", name); len(got) != 0 {
		t.Errorf("lag series after both consumers stopped: %v, want none", got)
	}
}

// produceTransactions produces each group of records in one committed
// Kafka transaction.
func produceTransactions(t *testing.T, brokers []string, txns [][]*kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.AllowAutoTopicCreation(),
		kgo.TransactionalID(unique("inbox-test-producer")), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, recs := range txns {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
	}
}

// metricValues gathers name's series of consumer from reg, keyed by their
// partition label ("" for series without one).
func metricValues(t *testing.T, reg *prometheus.Registry, name, consumer string) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["consumer"] != consumer {
				continue
			}
			v := m.GetCounter().GetValue()
			if m.GetGauge() != nil {
				v = m.GetGauge().GetValue()
			}
			if _, dup := out[labels["partition"]]; dup {
				t.Fatalf("%s: two series for partition %q: %v", name, labels["partition"], fmt.Sprint(mf))
			}
			out[labels["partition"]] = v
		}
	}
	return out
}
