package relay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
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
	for {
		err := r.runActive(ctx)
		worked = worked || r.commits > 0
		if errors.Is(err, kerr.InvalidTimestamp) && ctx.Err() == nil {
			if n := r.ts.judge(ctx, r.cfg.Kafka, time.Now()); n > 0 {
				r.log.Warn().Err(err).Int("rows", n).Str("on_invalid", string(r.cfg.OnInvalid)).
					Msg("the brokers refused record timestamps; resuming from the committed checkpoint to handle those rows as row errors")
				continue
			}
		}
		if err == nil || ctx.Err() != nil || !(retriableKafka(err) || worked && closedAtOnce(err)) {
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

// retriableKafka reports whether err is a Kafka error that may go away:
// transport errors, retriable broker errors, unknown commit outcomes. It
// is false for our own timeouts (KafkaTimeout passed), for errors that
// repeat (record too large, authorization), and for fencing: another
// producer with our transactional id (a second router, or an operator's
// forced checkpoint) now owns it, and resuming would fence it in turn.
func retriableKafka(err error) bool {
	switch {
	case errors.Is(err, ErrTransactionTimedOut):
		return true // the broker aborted it; a new session resumes
	case errors.Is(err, ErrFenced), errors.Is(err, ErrShutdownTimeout):
		return false
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, kgo.ErrRecordTimeout), errors.Is(err, ErrKafkaStalled):
		return false
	case errors.Is(err, kerr.ProducerFenced), errors.Is(err, kerr.InvalidProducerEpoch),
		errors.Is(err, kerr.TransactionalIDAuthorizationFailed),
		errors.Is(err, kerr.TopicAuthorizationFailed), errors.Is(err, kerr.ClusterAuthorizationFailed),
		errors.Is(err, kerr.MessageTooLarge), errors.Is(err, kerr.RecordListTooLarge),
		errors.Is(err, kerr.UnknownTopicOrPartition):
		return false
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Retriable || errors.Is(err, kerr.UnknownServerError) || errors.Is(err, kerr.OperationNotAttempted) ||
			errors.Is(err, kerr.TransactionAbortable)
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "unable to dial") || strings.Contains(msg, "connection refused") ||
		strings.Contains(msg, "broken pipe") || strings.Contains(msg, "connection reset") || strings.Contains(msg, "EOF")
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
