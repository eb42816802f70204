package kafka

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/acl"
)

// WriteCheckpoint stores rec (from Checkpoint.Record or Tombstone) in its
// own Kafka transaction of transactionalIDs[0], after fencing the others
// (Fence), and returns once that is committed and
// read_committed readers (Load) see it: Apache Kafka writes the commit
// marker after EndTxn returns, and until then the topic's last stable
// offset stays before the record.
// opts are the connection options of a client Write creates and closes.
//
// Initialising the router's transactional ids first fences every other
// producer using them (a running exactly-once router fails its next
// commit and stops) and ends their open transactions, so the record
// written is the last one for the key until a router starts again. An
// at-least-once router uses no transactional id and is not fenced.
func WriteCheckpoint(ctx context.Context, rec *kgo.Record, transactionalIDs []string, opts ...kgo.Opt) error {
	for _, id := range transactionalIDs[1:] {
		if err := Fence(ctx, id, opts...); err != nil {
			return err
		}
	}
	transactionalID := transactionalIDs[0]
	cl, err := kgo.NewClient(append(append([]kgo.Opt{}, opts...),
		kgo.TransactionalID(transactionalID),
		kgo.TransactionTimeout(30*time.Second),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	)...)
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	if _, _, err := cl.ProducerID(ctx); err != nil {
		return fmt.Errorf("initialising transactional producer %q: %w", transactionalID, acl.Hint(err, "WRITE", acl.TransactionalID(transactionalID)))
	}
	if err := cl.BeginTransaction(); err != nil {
		return fmt.Errorf("beginning Kafka transaction: %w", err)
	}
	if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		err = acl.Hint(acl.Hint(err, "WRITE", acl.Topic(rec.Topic)), "WRITE", acl.TransactionalID(transactionalID))
		abortCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if aerr := cl.EndTransaction(abortCtx, kgo.TryAbort); aerr != nil {
			return fmt.Errorf("writing checkpoint record for %q to %q: %w (and aborting: %v)", rec.Key, rec.Topic, err, aerr)
		}
		return fmt.Errorf("writing checkpoint record for %q to %q: %w", rec.Key, rec.Topic, err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("committing checkpoint record for %q to %q: %w", rec.Key, rec.Topic, acl.Hint(err, "WRITE", acl.TransactionalID(transactionalID)))
	}
	return waitStable(ctx, kadm.NewClient(cl), rec)
}

// waitStable returns once the last stable offset of rec's partition is
// past rec (its transaction's marker written), or after visibleWait.
func waitStable(ctx context.Context, adm *kadm.Client, rec *kgo.Record) error {
	ctx, cancel := context.WithTimeout(ctx, visibleWait)
	defer cancel()
	for {
		offs, err := adm.ListCommittedOffsets(ctx, rec.Topic)
		if err == nil {
			if o, ok := offs.Lookup(rec.Topic, rec.Partition); ok && o.Err == nil && o.Offset > rec.Offset {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("checkpoint record for %q committed at offset %d of %q, but read_committed readers do not see it after %s (a transaction of another producer still open on the partition?): %w",
				rec.Key, rec.Offset, rec.Topic, visibleWait, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// visibleWait bounds how long Write waits for its commit to become
// visible: another producer's transaction open on the partition holds the
// last stable offset back until it ends, at the latest after its
// transaction timeout (the router's default 60 s).
const visibleWait = 90 * time.Second

// Fence initialises transactionalID with a client of its own and closes
// it: every producer of that id is fenced, and its open transaction ended
// by Kafka, when it returns nil.
func Fence(ctx context.Context, transactionalID string, opts ...kgo.Opt) error {
	cl, err := kgo.NewClient(append(append([]kgo.Opt{}, opts...),
		kgo.TransactionalID(transactionalID),
		kgo.TransactionTimeout(30*time.Second),
	)...)
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	if _, _, err := cl.ProducerID(ctx); err != nil {
		return fmt.Errorf("initialising transactional producer %q: %w", transactionalID, acl.Hint(err, "WRITE", acl.TransactionalID(transactionalID)))
	}
	return nil
}
