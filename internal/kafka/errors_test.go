package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestRetriable(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("committing Kafka transaction: %w", err) }
	dial := func(err error) error {
		return fmt.Errorf("unable to dial: %w", &net.OpError{Op: "dial", Net: "tcp", Err: err})
	}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"broker down (refused dial)", dial(os.NewSyscallError("connect", syscall.ECONNREFUSED)), true},
		{"unknown host", dial(&net.DNSError{Err: "no such host", Name: "kafka-0", IsNotFound: true}), true},
		{"connection reset", wrap(&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}), true},
		{"broken pipe", wrap(&net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)}), true},
		{"connection closed by the broker", wrap(io.EOF), true},
		{"cut mid-response", wrap(io.ErrUnexpectedEOF), true},
		{"retriable code", wrap(kerr.NotLeaderForPartition), true},
		{"coordinator moved", wrap(kerr.NotCoordinator), true},
		{"unknown outcome: server error", wrap(kerr.UnknownServerError), true},
		{"unknown outcome: not attempted", wrap(kerr.OperationNotAttempted), true},
		{"transaction abortable", wrap(kerr.TransactionAbortable), true},
		{"fenced", wrap(kerr.ProducerFenced), false},
		{"stale epoch", wrap(kerr.InvalidProducerEpoch), false},
		{"record too large", wrap(kerr.MessageTooLarge), false},
		{"missing topic", wrap(kerr.UnknownTopicOrPartition), false},
		{"not authorized", wrap(kerr.TopicAuthorizationFailed), false},
		{"our deadline", wrap(context.DeadlineExceeded), false},
		{"cancelled", wrap(context.Canceled), false},
		{"record timeout", wrap(kgo.ErrRecordTimeout), false},
		{"text that only looks like a lost connection", errors.New("payload says connection reset and EOF"), false},
		{"bad SASL (EOF on the first read)", wrap(&kgo.ErrFirstReadEOF{}), false},
	} {
		if got := Retriable(tc.err); got != tc.want {
			t.Errorf("%s: Retriable(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

func TestStaleEpoch(t *testing.T) {
	for _, err := range []error{kerr.ProducerFenced, kerr.InvalidProducerEpoch, kerr.InvalidTxnState, kerr.InvalidProducerIDMapping} {
		if !StaleEpoch(fmt.Errorf("x: %w", err)) {
			t.Errorf("StaleEpoch(%v) = false", err)
		}
	}
	if StaleEpoch(kerr.NotLeaderForPartition) || StaleEpoch(io.EOF) {
		t.Error("StaleEpoch of an error that is not about the epoch")
	}
}

func TestDescribe(t *testing.T) {
	rec := record("orders", "5b8e2b1a-3c4d-4e5f-8a9b-0c1d2e3f4a5b")
	got := Describe(rec, kerr.UnknownTopicOrPartition).Error()
	want := "producing event_id 5b8e2b1a-3c4d-4e5f-8a9b-0c1d2e3f4a5b (transaction 0-1-7) to topic orders: " +
		kerr.UnknownTopicOrPartition.Error() + "; topic orders does not exist and the brokers did not create it: create it, or allow auto-creation (--auto-create-topics and the brokers' auto.create.topics.enable)"
	if got != want {
		t.Errorf("Describe:\n %s\nwant\n %s", got, want)
	}
	got = Describe(&kgo.Record{Topic: "cp"}, kerr.MessageTooLarge).Error()
	if !strings.HasPrefix(got, "producing to topic cp: "+kerr.MessageTooLarge.Error()+"; ") || !strings.Contains(got, "raise topic cp's max.message.bytes") {
		t.Errorf("Describe of a record without an id: %s", got)
	}
	got = Describe(rec, fmt.Errorf("x: %w", kerr.TopicAuthorizationFailed)).Error()
	if !strings.HasSuffix(got, "; grant the router's Kafka principal WRITE (and CREATE, unless the topic is created beforehand) on topic orders") {
		t.Errorf("Describe of a denied record: %s", got)
	}
}
