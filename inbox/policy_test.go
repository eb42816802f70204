package inbox_test

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
	"github.com/binlog-router/binlog-router/internal/inboxtest"
)

// TestInboxMissingID: a record without an "id" header is dead-lettered
// without calling the handler under MissingIDReject (the default), and
// handled under the id "topic/partition/offset" under MissingIDDerive, so
// that a redelivery of that record is a duplicate.
func TestInboxMissingID(t *testing.T) {
	d := inboxtest.MariaDB()
	db := d.OpenInbox(t)
	inboxtest.MustExec(t, db, "CREATE TABLE seen (event_id VARCHAR(255) NOT NULL, payload VARCHAR(64) NOT NULL)")
	k := newKafka(t)
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
		c := inboxtest.Start(t, inbox.Config{
			Brokers: k.Brokers, Topics: []string{topic}, ConsumerName: name, Group: group,
			DB: db, Dialect: d.Dialect, Handler: handler, MissingID: policy, CommitInterval: 50 * time.Millisecond,
		})
		eventually(t, 60*time.Second, "every record handled", func() bool { return done(c.Stats()) })
		if err := c.Stop(t); err != nil {
			t.Fatal(err)
		}
		return c.Stats()
	}

	reject := unique("reject")
	st := run(reject, reject, inbox.MissingIDReject, func(s inbox.Stats) bool { return s.Processed+s.DeadLetters >= 3 })
	if st.Processed != 1 || st.DeadLetters != 2 || st.Retries != 0 || len(handled) != 1 || handled[0] != "ev-1" {
		t.Errorf("reject: stats %+v, handler saw %v; want ev-1 applied and two dead letters without a handler call", st, handled)
	}
	dls := readRecords(t, k.Brokers, reject+".dead-letter", 2, 30*time.Second)
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
	d := inboxtest.MariaDB()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db := d.OpenInbox(t)
	inboxtest.MustExec(t, db, "CREATE TABLE effects (event_id VARCHAR(64) NOT NULL)")
	k := newKafka(t)
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
		DB: db, Dialect: d.Dialect, Handler: handler, OnFailure: inbox.Stop,
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
	r := inboxtest.Start(t, cfg)
	eventually(t, 60*time.Second, "the rest applied", func() bool { return r.Stats().Processed >= 2+int64(2-bDone) })
	if err := r.Stop(t); err != nil {
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

// TestInboxDeadLetterTopic: under DeadLetter, Run creates the dead-letter
// topic at start (brokers create topics only when a client asks, and the
// consumer's producer never does), before any record failed; a topic it
// can neither find nor create ends Run at once with an error naming it;
// under Stop no dead-letter topic is made.
func TestInboxDeadLetterTopic(t *testing.T) {
	d := inboxtest.MariaDB()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db := d.OpenInbox(t)
	k := newKafka(t)
	topic := unique("inbox.dlt")
	inboxtest.ProduceRecords(t, k.Brokers, []*kgo.Record{{Topic: topic, Key: []byte("k"), Headers: []kgo.RecordHeader{{Key: "id", Value: []byte("ev-1")}}}})
	adm := newAdmin(t, k.Brokers)
	exists := func(name string) bool {
		td, err := adm.ListTopics(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return td.Has(name) && td[name].Err == nil
	}
	cfg := func(name string, policy inbox.FailurePolicy) inbox.Config {
		return inbox.Config{
			Brokers: k.Brokers, Topics: []string{topic}, ConsumerName: name, DB: db, Dialect: d.Dialect, OnFailure: policy,
			Handler: func(context.Context, *sql.Tx, inbox.Event) error { return nil },
		}
	}

	made := unique("dlt-made")
	r := inboxtest.Start(t, cfg(made, inbox.DeadLetter))
	eventually(t, 60*time.Second, "the dead-letter topic created and the record applied", func() bool {
		return exists(made+".dead-letter") && r.Stats().Processed == 1
	})
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}

	stop := unique("dlt-stop")
	r = inboxtest.Start(t, cfg(stop, inbox.Stop))
	eventually(t, 60*time.Second, "the record applied", func() bool { return r.Stats().Processed == 1 })
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
	if exists(stop + ".dead-letter") {
		t.Errorf("OnFailure Stop created %s.dead-letter", stop)
	}

	// Kafka refuses a topic whose name differs from an existing one only
	// in '.' versus '_'.
	clash := unique("dlt-clash")
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, clash+"_dead-letter"); err != nil {
		t.Fatal(err)
	}
	c, err := inbox.New(cfg(clash, inbox.DeadLetter))
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	err = c.Run(ctx)
	t.Logf("Run with an uncreatable dead-letter topic returned after %v: %v", time.Since(began).Round(time.Millisecond), err)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(`dead-letter topic "%s.dead-letter" does not exist and creating it failed`, clash)) {
		t.Errorf("Run with an uncreatable dead-letter topic: %v", err)
	}
	if st := c.Stats(); st.Processed != 0 {
		t.Errorf("stats %+v: nothing should have been consumed", st)
	}
}
