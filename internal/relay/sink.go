package relay

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/kafka"
)

// Sink is the Kafka producer of one active session: transactional
// (exactly-once) or idempotent (at-least-once). *kafka.Producer is
// the implementation; the relay's unit tests also wrap it or use a fake.
// Its methods are called from the relay goroutine only.
type Sink interface {
	// Init fences older producers of the router's transactional id
	// (exactly-once; nothing for an idempotent producer). Once it returns
	// nil, their open transaction is aborted and nothing they still
	// commit becomes visible, so a checkpoint read next is final.
	Init(ctx context.Context) error

	// Begin opens a Kafka transaction unless one is open (exactly-once;
	// nothing for an idempotent producer). Records produced from now on
	// belong to it.
	Begin() error

	// Began returns when the open transaction was begun, by the local
	// clock, and false when none is open. It tells a transaction timeout
	// from a takeover (fenced).
	Began() (time.Time, bool)

	// Produce hands rec over without waiting for its acknowledgement. It
	// blocks while the producer's buffer is full, until ctx ends. A
	// failure is reported by Err and ends a Flush in progress. rec's
	// bytes must stay unchanged until it is acknowledged.
	Produce(ctx context.Context, rec *kgo.Record)

	// Flush blocks until every record produced before it is acknowledged,
	// or one failed, or ctx ends (then ctx's error). It returns nil once
	// a record failed: Err says so. When both Flush and Err return nil,
	// every record produced so far is durable (exactly-once: visible only
	// once committed). If either is not nil, no guarantees are given
	// about which records were delivered; in a transaction none of them
	// becomes visible unless Commit returns nil.
	Flush(ctx context.Context) error

	// Err returns the first record that failed, named by its event id
	// and transaction, or nil. It is final: a failed producer is closed
	// and a new session starts, or the relay stops.
	Err() error

	// Commit ends the open transaction with a commit; it is called after
	// a Flush with Err nil. When it returns nil, every record produced in
	// the transaction is durable and visible to read_committed consumers,
	// atomically. When it returns an error the outcome is unknown unless
	// kafka.StaleEpoch says the transaction was aborted (fenced or
	// timed out); the transaction stays open here for Abort or Drop.
	Commit(ctx context.Context) error

	// Abort drops the buffered records and aborts the open transaction at
	// the broker: none of its records become visible. It logs failures
	// (the broker aborts the transaction after the transaction timeout).
	Abort(ctx context.Context)

	// Drop drops the buffered records and forgets the open transaction
	// without ending it at the broker, for a stale producer epoch: an
	// abort would bump the epoch (KIP-588) and fence the instance that
	// took over. The broker or the next session aborts it.
	Drop(ctx context.Context)

	// Buffered is the number of records produced and not yet
	// acknowledged.
	Buffered() int64

	// Close releases the client; what is still buffered fails.
	Close()
}

var _ Sink = (*kafka.Producer)(nil)
