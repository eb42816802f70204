package relay

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/binlog-router/binlog-router/internal/kafka"
)

// ErrTransactionTimedOut means the broker aborted the open Kafka
// transaction because it was open longer than the transaction timeout
// (the process was paused, or Kafka too slow to take a commit). It is
// retried in-process: a new session resumes from the committed
// checkpoint.
var ErrTransactionTimedOut = errors.New("the broker aborted the Kafka transaction after the transaction timeout")

// ErrFenced means another producer with the router's transactional id
// took over: a second router with the same --name, or a forced
// checkpoint change. It is final: resuming would fence that instance in
// turn.
var ErrFenced = errors.New("another instance with the same --name took over")

// fenced names the cause of a stale-epoch error of the router's
// transactional producer (pipeline.Live.Fenced: the open Kafka
// transaction has records records, the first produced at began), or
// returns nil for any other error. The broker's answer is
// the same for both causes; the age of the open transaction tells them
// apart. The broker starts its timer when the transaction's first
// partition is added, after BeginTransaction here, so a transaction
// younger than the timeout cannot have timed out: another instance
// fenced this one. An older one may have been aborted by the timeout; a
// new session then starts, and if another instance did take over
// meanwhile, the new session fences it in turn and that one, whose
// transaction is young, stops with ErrFenced.
func (r *Relay) fenced(err error, records int, began time.Time) error {
	if r.cfg.Delivery != ExactlyOnce || !kafka.StaleEpoch(err) || errors.Is(err, ErrFenced) || errors.Is(err, ErrTransactionTimedOut) {
		return nil
	}
	// The open transaction began with its first record.
	if age := time.Since(began).Round(time.Millisecond); records > 0 && age >= r.cfg.TransactionTimeout {
		return fmt.Errorf("%w: it was open for %s, longer than --transaction-timeout %s (the process was paused or Kafka too slow to take the commit); resuming from the committed checkpoint: %w",
			ErrTransactionTimedOut, age, r.cfg.TransactionTimeout, err)
	}
	return fmt.Errorf("%w: the producer of transactional ids %s was fenced by a newer one (a second router with --name %s, or checkpoint set/reset --force); this router stops. To run several routers with one name, start each with --ha: one is active and the others stand by: %w",
		ErrFenced, strings.Join(kafka.TransactionalIDs(r.cfg.Name, r.cfg.KafkaTransactions), ", "), r.cfg.Name, err)
}
