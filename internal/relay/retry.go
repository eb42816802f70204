package relay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/txnproducer"
)

// runRetrying runs active sessions, starting a new one (new producer,
// fencing, checkpoint reload, binlog from the checkpoint) after a Kafka
// error that waiting may cure: a broker that went away, a commit whose
// outcome is unknown. A new session is exactly what a restarted process
// would do, so the guarantees are those of a crash, without the crash.
// It gives up when no session commits for KafkaTimeout.
func (r *Relay) runRetrying(ctx context.Context) error {
	backoff := 250 * time.Millisecond
	var failingSince time.Time
	for {
		err := r.runActive(ctx)
		if err == nil || ctx.Err() != nil || !retriable(err) {
			return err
		}
		if r.commits > 0 {
			failingSince, backoff = time.Time{}, 250*time.Millisecond
		}
		if failingSince.IsZero() {
			failingSince = time.Now()
		}
		if time.Since(failingSince) > r.cfg.KafkaTimeout {
			return fmt.Errorf("kafka has not accepted a commit for %s (--kafka-timeout): %w", r.cfg.KafkaTimeout, err)
		}
		r.cfg.Metrics.Failed("kafka")
		r.log.Warn().Err(err).Dur("backoff", backoff).Msg("kafka error; resuming from the committed checkpoint")
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return nil
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// retriable reports whether a new session may cure err: a Kafka error
// that waiting may cure (retriableKafka), or a source that lost its
// connection while it started (binlog.ConnectionLost). The source retries
// lost connections itself while it streams; any other error it stops with
// is final.
func retriable(err error) bool {
	var se *sourceError
	if errors.As(err, &se) {
		return binlog.ConnectionLost(se.err)
	}
	return retriableKafka(err)
}

// retriableKafka reports whether err is a Kafka error that may go away
// (txnproducer.Retriable: transport errors, retriable broker errors,
// unknown commit outcomes), or a transaction the broker aborted after its
// timeout. It is false for our own timeouts (KafkaTimeout,
// ShutdownTimeout passed), for errors that repeat (record too large,
// authorization), and for fencing: another producer with our
// transactional id (a second router, or an operator's forced checkpoint)
// now owns it, and resuming would fence it in turn.
func retriableKafka(err error) bool {
	switch {
	case errors.Is(err, ErrTransactionTimedOut):
		return true // the broker aborted it; a new session resumes
	case errors.Is(err, ErrFenced), errors.Is(err, ErrShutdownTimeout), errors.Is(err, ErrKafkaStalled):
		return false
	}
	return txnproducer.Retriable(err)
}
