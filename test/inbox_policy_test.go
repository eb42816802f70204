package test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/inbox"
	"github.com/binlog-router/binlog-router/internal/devenv"
)

// TestInboxMissingID: a record without an "id" header is dead-lettered
// without calling the handler under MissingIDReject (the default), and
// handled under the id "topic/partition/offset" under MissingIDDerive, so
// that a redelivery of that record is a duplicate.
func TestInboxMissingID(t *testing.T) {
	d := inboxMariaDB()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db := d.open(t)
	if err := inbox.CreateTable(ctx, db, d.dialect, ""); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "CREATE TABLE seen (event_id VARCHAR(255) NOT NULL, payload VARCHAR(64) NOT NULL)")
	k := devenv.NewKafka(t)
	topic := unique("inbox.noid")
	produceToPartitions(t, k, []*kgo.Record{
		{Topic: topic, Partition: 1, Key: []byte("k"), Value: []byte("with-id"), Headers: []kgo.RecordHeader{{Key: "id", Value: []byte("ev-1")}}},
		{Topic: topic, Partition: 1, Key: []byte("k"), Value: []byte("no-id")},
		{Topic: topic, Partition: 1, Key: []byte("k"), Value: []byte("empty-id"), Headers: []kgo.RecordHeader{{Key: "id", Value: nil}}},
	})
	var mu sync.Mutex
	var handled []string
	handler := func(ctx context.Context, tx *sql.Tx, ev inbox.Event) error {
		mu.Lock()
		handled = append(handled, ev.ID)
		mu.Unlock()
		_, err := tx.ExecContext(ctx, "INSERT INTO seen VALUES (?, ?)", ev.ID, string(ev.Payload))
		return err
	}
	run := func(name, group string, policy inbox.MissingIDPolicy, done func(inbox.Stats) bool) inbox.Stats {
		c := startInbox(t, inbox.Config{
			Brokers: k.Brokers, Topics: []string{topic}, ConsumerName: name, Group: group,
			DB: db, Dialect: d.dialect, Handler: handler, MissingID: policy, CommitInterval: 50 * time.Millisecond,
		})
		eventually(t, 60*time.Second, "every record handled", func() bool { return done(c.Stats()) })
		if err := c.stop(t); err != nil {
			t.Fatal(err)
		}
		return c.Stats()
	}

	reject := unique("reject")
	st := run(reject, reject, inbox.MissingIDReject, func(s inbox.Stats) bool { return s.Processed+s.DeadLetters >= 3 })
	if st.Processed != 1 || st.DeadLetters != 2 || st.Retries != 0 || len(handled) != 1 || handled[0] != "ev-1" {
		t.Errorf("reject: stats %+v, handler saw %v; want ev-1 applied and two dead letters without a handler call", st, handled)
	}
	dls := readTopic(t, k.Brokers, reject+".dead-letter", 2)
	for _, r := range dls {
		if !strings.Contains(recordHeader(r, inbox.HeaderError), `no "id" header`) || recordHeader(r, inbox.HeaderAttempts) != "0" ||
			recordHeader(r, inbox.HeaderOriginalPartition) != "1" || (string(r.Value) != "no-id" && string(r.Value) != "empty-id") {
			t.Errorf("dead letter %q headers %v", r.Value, r.Headers)
		}
	}

	derive := unique("derive")
	handled = nil
	st = run(derive, derive, inbox.MissingIDDerive, func(s inbox.Stats) bool { return s.Processed >= 3 })
	want := []string{"ev-1", topic + "/1/1", topic + "/1/2"}
	if st.Processed != 3 || st.DeadLetters != 0 || fmt.Sprint(handled) != fmt.Sprint(want) {
		t.Errorf("derive: stats %+v, handler saw %v, want %v", st, handled, want)
	}
	// The same records again (another group, the same consumer name): all
	// duplicates, the derived ids included.
	st = run(derive, unique("derive-again"), inbox.MissingIDDerive, func(s inbox.Stats) bool { return s.Duplicates >= 3 })
	if st.Processed != 0 || st.Duplicates != 3 {
		t.Errorf("derive, redelivered: stats %+v, want 3 duplicates", st)
	}
	var rows int
	if err := db.QueryRow("SELECT COUNT(*) FROM inbox WHERE consumer_name = ? AND event_id LIKE ?", derive, topic+"/1/%").Scan(&rows); err != nil || rows != 2 {
		t.Errorf("inbox rows with derived ids: %d (%v), want 2", rows, err)
	}
}

// TestInboxStopPolicy: with OnFailure Stop, a record that fails every
// attempt ends Run with a *HandlerError naming it, and the group's
// committed offset on its partition is that record's, so the next run
// starts with it; records before it and other partitions' records are
// committed.
func TestInboxStopPolicy(t *testing.T) {
	d := inboxMariaDB()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db := d.open(t)
	if err := inbox.CreateTable(ctx, db, d.dialect, ""); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "CREATE TABLE effects (event_id VARCHAR(64) NOT NULL)")
	k := devenv.NewKafka(t)
	topic, name := unique("inbox.stop"), unique("stopper")
	rec := func(p int32, id string) *kgo.Record {
		return &kgo.Record{Topic: topic, Partition: p, Key: []byte(id), Headers: []kgo.RecordHeader{{Key: "id", Value: []byte(id)}}}
	}
	produceToPartitions(t, k, []*kgo.Record{
		rec(0, "a-0"), rec(0, "a-1"), rec(0, "bad"), rec(0, "a-3"),
		rec(1, "b-0"), rec(1, "b-1"),
	})
	var healed sync.Once
	heal := make(chan struct{})
	handler := func(ctx context.Context, tx *sql.Tx, ev inbox.Event) error {
		if ev.ID == "bad" {
			select {
			case <-heal:
			default:
				return errors.New("bad event")
			}
		}
		_, err := tx.ExecContext(ctx, "INSERT INTO effects VALUES (?)", ev.ID)
		return err
	}
	cfg := inbox.Config{
		Brokers: k.Brokers, Topics: []string{topic}, ConsumerName: name,
		DB: db, Dialect: d.dialect, Handler: handler, OnFailure: inbox.Stop,
		MaxAttempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
	}
	c, err := inbox.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- c.Run(ctx) }()
	select {
	case err = <-errc:
	case <-time.After(90 * time.Second):
		t.Fatal("Run did not stop on the failing event")
	}
	var herr *inbox.HandlerError
	if !errors.As(err, &herr) || herr.EventID != "bad" || herr.Topic != topic || herr.Partition != 0 || herr.Offset != 2 ||
		herr.Attempts != 3 || !strings.Contains(err.Error(), "bad event") {
		t.Fatalf("Run: %v, want a *HandlerError for bad (%s/0@2) after 3 attempts", err, topic)
	}
	if st := c.Stats(); st.Retries != 2 || st.DeadLetters != 0 {
		t.Errorf("stats %+v, want 2 retries and no dead letter", st)
	}
	offs := committedOffsets(t, k.Brokers, name, topic)
	if offs[0] != 2 {
		t.Errorf("committed offset of partition 0: %d, want 2 (the failed record)", offs[0])
	}
	// Partition 1 may or may not have been handled before the stop; what
	// was handled is committed.
	var bDone int
	if err := db.QueryRow("SELECT COUNT(*) FROM effects WHERE event_id LIKE 'b-%'").Scan(&bDone); err != nil {
		t.Fatal(err)
	}
	if offs[1] != int64(bDone) {
		t.Errorf("committed offset of partition 1: %d, want %d (its handled records)", offs[1], bDone)
	}

	// The next run starts with the failed record.
	healed.Do(func() { close(heal) })
	var first sync.Once
	var firstID string
	cfg.Hooks.AfterCommit = func(ev inbox.Event) {
		if ev.Partition == 0 {
			first.Do(func() { firstID = ev.ID })
		}
	}
	cfg.OnFailure = inbox.DeadLetter
	r := startInbox(t, cfg)
	eventually(t, 60*time.Second, "the rest applied", func() bool { return r.Stats().Processed >= 2+int64(2-bDone) })
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	if firstID != "bad" {
		t.Errorf("the second run began partition 0 with %q, want bad", firstID)
	}
	var rows, distinct int
	if err := db.QueryRow("SELECT COUNT(*), COUNT(DISTINCT event_id) FROM effects").Scan(&rows, &distinct); err != nil || rows != 6 || distinct != 6 {
		t.Errorf("effects: %d rows, %d distinct (%v), want 6", rows, distinct, err)
	}
	if st := r.Stats(); st.Duplicates != 0 {
		t.Errorf("second run %+v: want no duplicate (the committed offsets were exact)", st)
	}
}
