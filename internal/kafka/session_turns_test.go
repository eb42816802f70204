package kafka

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
)

// A session with two transactional ids commits its transactions with
// them in turn: a read_committed consumer reads every committed record in
// the order produced, the newest checkpoint is the last committed one,
// and a new session fences both ids, so that a transaction the old one
// left open on either is aborted.
func TestSessionTransactionsInTurn(t *testing.T) {
	k := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ids := TransactionalIDs("turns", 2)
	if want := []string{"binlog-router-turns", "binlog-router-turns#2"}; !slices.Equal(ids, want) {
		t.Fatalf("TransactionalIDs = %v, want %v", ids, want)
	}
	var ended []string // the transactional ids of the EndTxn requests, in order
	k.Cluster.ControlKey(int16(kmsg.EndTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
		k.Cluster.KeepControl()
		ended = append(ended, req.(*kmsg.EndTxnRequest).TransactionalID)
		return nil, nil, false
	})
	open := func() (*Session, *checkpoint.Checkpoint) {
		s, err := NewSession(SessionConfig{
			Producer:         testConfig(k),
			TransactionalIDs: ids,
			Name:             "turns",
			CheckpointTopic:  checkpoint.DefaultTopic,
			SettleWait:       20 * time.Second,
			Log:              zerolog.Nop(),
		})
		mustNil(t, err)
		cp, err := s.Open(ctx)
		mustNil(t, err)
		return s, cp
	}
	commit := func(s *Session, gtid string, recs ...string) {
		t.Helper()
		for _, id := range recs {
			mustNil(t, s.Produce(ctx, record("t", id)))
		}
		mustNil(t, s.Commit(ctx, &checkpoint.Checkpoint{Name: "turns", GTIDSet: gtid, Flavor: "mariadb", Time: time.Now()}))
	}

	s, cp := open()
	if cp != nil {
		t.Fatalf("first Open = %v, want no checkpoint", cp)
	}
	commit(s, "0-1-1", "a", "b")
	commit(s, "0-1-2", "c")
	commit(s, "0-1-3", "d", "e")
	// A transaction left open on the second id, as a process that died
	// would leave it: the next session's Open must abort it.
	mustNil(t, s.Produce(ctx, record("t", "left-open")))
	mustNil(t, s.p().Flush(ctx))

	s2, cp := open()
	if cp == nil || cp.GTIDSet != "0-1-3" {
		t.Fatalf("second Open loaded %v, want the checkpoint 0-1-3", cp)
	}
	commit(s2, "0-1-4", "f")
	// The first session's producers are fenced: its open transaction
	// cannot commit.
	if err := s.Commit(ctx, &checkpoint.Checkpoint{Name: "turns", GTIDSet: "0-1-99", Flavor: "mariadb", Time: time.Now()}); err == nil {
		t.Fatal("the fenced session committed")
	} else if !errors.Is(err, ErrCommitUnknown) && !StaleEpoch(err) {
		t.Logf("the fenced session's commit failed: %v", err)
	}
	s.Abort(ctx, errors.New("fenced"))
	_ = s.Close(ctx)
	mustNil(t, s2.Close(ctx))

	if got, want := readCommitted(t, k, "t", "f"), []string{"a", "b", "c", "d", "e", "f"}; !slices.Equal(got, want) {
		t.Errorf("read_committed consumer read %v, want %v", got, want)
	}
	if want := []string{ids[0], ids[1], ids[0]}; len(ended) < 4 || !slices.Equal(ended[:3], want) {
		t.Errorf("EndTxn requests of %v, want the first three of %v, then the second session's", ended, want)
	}
	cp, err := LoadCheckpoint(ctx, checkpoint.DefaultTopic, "turns", kgo.SeedBrokers(k.Brokers...))
	mustNil(t, err)
	if cp.GTIDSet != "0-1-4" {
		t.Errorf("checkpoint %s, want 0-1-4", cp.GTIDSet)
	}
}
