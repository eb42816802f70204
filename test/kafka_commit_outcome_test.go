package test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/test/harness"
)

// TestApacheKafkaCommitOutcomeAfterRestart asks Apache Kafka, without the
// router, what a new session of a transactional id sees of the id's last
// acknowledged transaction after a broker restart. A bare franz-go
// transactional producer commits transactions that each write three
// records to a data topic and one counter record to a single-partition
// "checkpoint" topic, while the node is stopped gracefully at a random
// moment and started again. A new client of the same id then initialises
// its producer id (InitProducerId completes or aborts the previous
// transaction) and reads the checkpoint partition read_committed up to
// its last stable offset, once at once (as the router did) and once after
// kafka.Settle (as it does now). The settled read must never be
// behind the last commit Kafka acknowledged; how often the immediate
// read was behind is logged: each time is a session that would have
// resumed before a committed transaction and published it again.
func TestApacheKafkaCommitOutcomeAfterRestart(t *testing.T) {
	rng := harness.FaultRand(t)
	k := harness.PrivateApache(t, devenv.ApacheKafkaConfig{})
	a := k.Apache
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	opts := []kgo.Opt{kgo.SeedBrokers(k.Brokers...), kgo.MetadataMinAge(100 * time.Millisecond)}
	const cpTopic, dataTopic, txnID = "outcome_cp", "outcome_data", "outcome-txn"
	adm := harness.NewAdmin(t, k.Brokers)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, cpTopic); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, dataTopic); err != nil {
		t.Fatal(err)
	}

	rounds := 6
	if harness.FaultsLong() {
		rounds = 30
	}
	var acked atomic.Int64 // the counter of the last acknowledged commit
	behindAtOnce, waited, hung := 0, 0, 0
	for round := 1; round <= rounds; round++ {
		p, err := kgo.NewClient(append(opts, kgo.TransactionalID(txnID), kgo.TransactionTimeout(20*time.Second))...)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for n := acked.Load() + 1; ; n++ {
				if err := commitCounter(ctx, p, cpTopic, dataTopic, n); err != nil {
					return // the node went away: this session ends
				}
				acked.Store(n)
			}
		}()
		time.Sleep(harness.RandDur(rng, 300*time.Millisecond, 1500*time.Millisecond))
		stopCtx, stopCancel := context.WithTimeout(ctx, time.Minute)
		if err := a.StopNode(stopCtx, 0); err != nil {
			t.Fatalf("round %d: stopping the node: %v", round, err)
		}
		stopCancel()
		<-done
		// Closing the client fails what it still buffers and sends nothing
		// more: the node is down.
		p.Close()
		time.Sleep(harness.RandDur(rng, 500*time.Millisecond, 2*time.Second))
		startCtx, startCancel := context.WithTimeout(ctx, 2*time.Minute)
		if err := a.StartNode(startCtx, 0); err != nil {
			t.Fatalf("round %d: starting the node: %v", round, err)
		}
		startCancel()

		// The new session: InitProducerId, then read at once, then settle
		// and read again.
		next, err := kgo.NewClient(append(opts, kgo.TransactionalID(txnID), kgo.TransactionTimeout(20*time.Second))...)
		if err != nil {
			t.Fatal(err)
		}
		if err := initProducerID(ctx, next); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		atOnce, err := lastCounter(ctx, opts, cpTopic)
		if err != nil {
			t.Fatalf("round %d: reading at once: %v", round, err)
		}
		st, err := kafka.Settle(ctx, cpTopic, 20*time.Second, opts...)
		if errors.Is(err, kafka.ErrUnsettled) {
			// A hanging transaction: Kafka completed the transaction at the
			// coordinator without writing its marker to this partition. The
			// router would stop here rather than read a checkpoint from a
			// guess; the partition stays so until an operator aborts the
			// transaction, so the rounds end.
			hung++
			t.Logf("round %d: %v (last acknowledged commit %d, read at once %d)", round, err, acked.Load(), atOnce)
			describeTransactions(ctx, t, adm, txnID, cpTopic, dataTopic)
			next.Close()
			break
		}
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		settled, err := lastCounter(ctx, opts, cpTopic)
		if err != nil {
			t.Fatalf("round %d: reading after settling: %v", round, err)
		}
		next.Close()
		want := acked.Load()
		t.Logf("round %d: last acknowledged commit %d, read at once %d, read settled %d (waited %s)", round, want, atOnce, settled, st.Waited)
		if atOnce < want {
			behindAtOnce++
		}
		if st.Waited > 0 {
			waited++
		}
		if settled < want {
			t.Errorf("round %d: the settled read gives commit %d, behind the acknowledged commit %d: Kafka lost a committed transaction", round, settled, want)
		}
		if settled > want {
			acked.Store(settled) // the commit whose answer was lost was committed
		}
	}
	t.Logf("graceful restarts: a read right after InitProducerId was behind the last acknowledged commit %d times; Settle waited %d times; "+
		"a transaction hung on the checkpoint partition %d times", behindAtOnce, waited, hung)
}

// commitCounter commits one transaction: three records to dataTopic and
// the counter n to cpTopic.
func commitCounter(ctx context.Context, p *kgo.Client, cpTopic, dataTopic string, n int64) error {
	if err := p.BeginTransaction(); err != nil {
		return err
	}
	val := binary.BigEndian.AppendUint64(nil, uint64(n))
	recs := []*kgo.Record{{Topic: cpTopic, Key: []byte("c"), Value: val}}
	for i := range 3 {
		recs = append(recs, &kgo.Record{Topic: dataTopic, Key: []byte(fmt.Sprint(i)), Value: val})
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := p.ProduceSync(rctx, recs...).FirstErr(); err != nil {
		_ = p.EndTransaction(rctx, kgo.TryAbort)
		return err
	}
	return p.EndTransaction(rctx, kgo.TryCommit)
}

// initProducerID initialises p's transactional producer id, retrying
// while the restarted node loads its coordinator.
func initProducerID(ctx context.Context, p *kgo.Client) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, _, err := p.ProducerID(ictx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("initialising the producer id: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lastCounter reads topic's partition 0 read_committed up to its last
// stable offset and returns the last counter, 0 if none.
func lastCounter(ctx context.Context, opts []kgo.Opt, topic string) (int64, error) {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	var end int64
	for {
		ends, err := kadm.NewClient(cl).ListCommittedOffsets(ctx, topic)
		if err == nil {
			if o, ok := ends.Lookup(topic, 0); ok && o.Err == nil {
				end = o.Offset
				break
			}
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		time.Sleep(100 * time.Millisecond)
	}
	if end == 0 {
		return 0, nil
	}
	rd, err := kgo.NewClient(append(opts,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords(), kgo.FetchMaxWait(100*time.Millisecond))...)
	if err != nil {
		return 0, err
	}
	defer rd.Close()
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var last int64
	for {
		fs := rd.PollFetches(rctx)
		if err := rctx.Err(); err != nil {
			return 0, fmt.Errorf("reading %s to offset %d: %w", topic, end, err)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.Canceled) {
				ferr = err
			}
		})
		if ferr != nil {
			return 0, ferr
		}
		reached := false
		fs.EachRecord(func(r *kgo.Record) {
			if !r.Attrs.IsControl() && len(r.Value) == 8 {
				last = int64(binary.BigEndian.Uint64(r.Value))
			}
			if r.Offset >= end-1 {
				reached = true
			}
		})
		if reached {
			return last, nil
		}
	}
}

// describeTransactions logs what the coordinator says of txnID and what
// the leaders of the topics' partitions say of their producers and
// offsets: where a transaction hangs.
func describeTransactions(ctx context.Context, t *testing.T, adm *kadm.Client, txnID string, topics ...string) {
	set := kadm.TopicsSet{}
	for _, d := range mustListTopics(ctx, t, adm, topics...) {
		for p := range d.Partitions {
			set.Add(d.Topic, p)
		}
	}
	if ps, err := adm.DescribeProducers(ctx, set); err != nil {
		t.Logf("describing producers: %v", err)
	} else {
		ps.EachProducer(func(p kadm.DescribedProducer) {
			t.Logf("%s/%d: producer %d epoch %d, open transaction from offset %d", p.Topic, p.Partition, p.ProducerID, p.ProducerEpoch, p.CurrentTxnStartOffset)
		})
	}
	if txs, err := adm.DescribeTransactions(ctx, txnID); err != nil {
		t.Logf("describing transaction %s: %v", txnID, err)
	} else {
		for _, d := range txs {
			t.Logf("coordinator: transaction %s is %s (producer %d epoch %d, partitions %v)", d.TxnID, d.State, d.ProducerID, d.ProducerEpoch, d.Topics)
		}
	}
	stable, _ := adm.ListCommittedOffsets(ctx, topics...)
	ends, _ := adm.ListEndOffsets(ctx, topics...)
	stable.Each(func(o kadm.ListedOffset) {
		e, _ := ends.Lookup(o.Topic, o.Partition)
		t.Logf("%s/%d: stable up to %d of %d", o.Topic, o.Partition, o.Offset, e.Offset)
	})
}

func mustListTopics(ctx context.Context, t *testing.T, adm *kadm.Client, topics ...string) kadm.TopicDetails {
	d, err := adm.ListTopics(ctx, topics...)
	if err != nil {
		t.Fatalf("listing %v: %v", topics, err)
	}
	return d
}
