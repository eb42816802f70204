package relay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/pipeline"
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
	worked := false // a session of this process has committed
	r.known = outcomes{}
	for {
		err := r.runActive(ctx)
		r.known.sessionEnded(r.loop.Committed(), r.loop.Pending(), err)
		worked = worked || r.loop.Commits() > 0
		if errors.Is(err, kerr.InvalidTimestamp) && ctx.Err() == nil {
			if n := r.loop.JudgeRefused(ctx, r.cfg.Kafka, time.Now()); n > 0 {
				r.log.Warn().Err(err).Int("rows", n).Str("on_invalid", string(r.cfg.OnInvalid)).
					Msg("the brokers refused record timestamps; resuming from the committed checkpoint to handle those rows as row errors")
				continue
			}
		}
		if err != nil && ctx.Err() != nil && (retriable(err) || worked && closedAtOnce(err)) {
			// Stopping: no new session. The checkpoint stays the last one
			// Kafka committed, which the next start resumes from.
			return fmt.Errorf("stopping: Kafka failed before the last commit (a broker going away?); the next start resumes from the last committed checkpoint: %w", err)
		}
		if err == nil || ctx.Err() != nil || !(retriable(err) || worked && closedAtOnce(err)) {
			return err
		}
		if r.loop.Commits() > 0 {
			failingSince, backoff = time.Time{}, 250*time.Millisecond
		}
		if failingSince.IsZero() {
			failingSince = time.Now()
		}
		if time.Since(failingSince) > r.cfg.KafkaTimeout {
			return fmt.Errorf("kafka has not accepted a commit for %s (--kafka-timeout): %w", r.cfg.KafkaTimeout, err)
		}
		r.cfg.Metrics.Failed("kafka")
		if unreachable(err) {
			// One INFO line for the outage; its end is logged at the
			// first commit Kafka accepts (outage.resumed).
			r.outage.begin(err)
			r.log.Debug().Err(err).Dur("backoff", backoff).Msg("kafka error; resuming from the committed checkpoint")
		} else {
			r.log.Warn().Err(err).Dur("backoff", backoff).Msg("kafka error; resuming from the committed checkpoint")
		}
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
	var se *pipeline.SourceError
	if errors.As(err, &se) {
		return binlog.ConnectionLost(se.Err)
	}
	return retriableKafka(err)
}

// retriableKafka reports whether err is a Kafka error that may go away
// (kafka.Retriable: transport errors, retriable broker errors,
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
	case errors.Is(err, kafka.ErrUnsettled), errors.Is(err, ErrCheckpointBehind):
		return true // the next session reads the checkpoint again, until KafkaTimeout
	case errors.Is(err, ErrFenced), errors.Is(err, pipeline.ErrShutdownTimeout), errors.Is(err, pipeline.ErrKafkaStalled):
		return false
	}
	return kafka.Retriable(err)
}

// closedAtOnce reports a connection the broker side closed before its
// first answer. franz-go takes it for a TLS or SASL mismatch and does not
// retry it, and at the first connection that is the likely cause. Once
// the settings have worked, it is a broker going away behind a proxy or a
// load balancer, which accepts the connection and then has nowhere to
// forward it: retriable.
func closedAtOnce(err error) bool {
	var first *kgo.ErrFirstReadEOF
	return errors.As(err, &first)
}
