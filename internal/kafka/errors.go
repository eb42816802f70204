package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/acl"
	"github.com/binlog-router/binlog-router/internal/route"
)

// Describe names the outbox row of a failed record: its event id and
// source transaction travel in its headers (route.HeaderID,
// route.HeaderBinlogGTID). A missing topic gets the fix.
func Describe(rec *kgo.Record, err error) error {
	var id, gtidText string
	for _, h := range rec.Headers {
		switch h.Key {
		case route.HeaderID:
			id = string(h.Value)
		case route.HeaderBinlogGTID:
			gtidText = string(h.Value)
		}
	}
	err = acl.Hint(err, "WRITE (and CREATE, unless the topic is created beforehand)", acl.Topic(rec.Topic))
	switch {
	case errors.Is(err, kerr.MessageTooLarge):
		err = fmt.Errorf("%w; the brokers refused a record batch for topic %s as larger than its limit; the router sizes batches to the topic's max.message.bytes (or the brokers' message.max.bytes) read when it starts or first produces to the topic, so the limit was lowered since or could not be read (DESCRIBE_CONFIGS): restart the router to read it again, or raise topic %s's max.message.bytes", err, rec.Topic, rec.Topic)
	case errors.Is(err, kerr.UnknownTopicOrPartition):
		err = fmt.Errorf("%w; topic %s does not exist and the brokers did not create it: create it, or allow auto-creation (--auto-create-topics and the brokers' auto.create.topics.enable)", err, rec.Topic)
	case errors.Is(err, kerr.InvalidTimestamp):
		err = fmt.Errorf("%w; the brokers refused the record batch: a record's timestamp (created_at, or the commit time) is outside topic %s's message.timestamp.after.max.ms / message.timestamp.before.max.ms of their clock (this record's: %s)",
			err, rec.Topic, rec.Timestamp.UTC().Format(time.RFC3339Nano))
	}
	if id == "" {
		return fmt.Errorf("producing to topic %s: %w", rec.Topic, err)
	}
	return fmt.Errorf("producing event_id %s (transaction %s) to topic %s: %w", id, gtidText, rec.Topic, err)
}

// StaleEpoch reports whether err says that the producer's epoch is no
// longer the broker's: the coordinator bumped it, either when it aborted
// a timed-out transaction or when another producer initialised the same
// transactional id. Kafka returns INVALID_PRODUCER_EPOCH to the produce
// requests of the old epoch and PRODUCER_FENCED to its transaction
// requests; kfake also INVALID_TXN_STATE to produce requests after a
// timeout abort. INVALID_PRODUCER_ID_MAPPING follows an expired
// transactional id.
func StaleEpoch(err error) bool {
	return errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch) ||
		errors.Is(err, kerr.InvalidTxnState) || errors.Is(err, kerr.InvalidProducerIDMapping)
}

// Retriable reports whether a producer error may go away when a new
// producer tries again: a broker that went away or is not ready, a commit
// whose outcome is unknown. It is false for deadlines (the caller's
// timeout passed), for errors that repeat (a record too large, a missing
// topic, authorization) and for a stale epoch (StaleEpoch: the caller
// decides between a takeover and a timeout).
//
// Kafka error codes decide by their retriable flag, plus the ones that
// end a transaction whose commit may not have happened
// (UNKNOWN_SERVER_ERROR, OPERATION_NOT_ATTEMPTED, TRANSACTION_ABORTABLE).
// Transport errors decide by kgo.IsRetryableBrokerErr, and a failed dial
// (a broker that is down) is retriable too: IsRetryableBrokerErr leaves
// it to the caller.
func Retriable(err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled), errors.Is(err, kgo.ErrRecordTimeout):
		return false
	case StaleEpoch(err),
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
	if kgo.IsRetryableBrokerErr(err) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
