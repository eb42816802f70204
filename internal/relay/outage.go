package relay

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// outage turns a Kafka outage into two INFO lines: one when the router
// first fails to reach Kafka ("Kafka unreachable: <error>; retrying")
// and one when routing resumes, at the next commit Kafka accepts ("Kafka
// reachable again after 4.2s"), and reports each ended outage to
// Metrics.KafkaOutage. What franz-go and the sessions retry in between
// is logged at debug level (franz-go's own connection warnings are rate
// limited by logging.Kgo).
//
// An outage begins at a failed dial to a broker (a franz-go hook on every
// client of the relay) or at a session ended by a transport error; it
// ends at a commit. Its methods are safe for concurrent use.
type outage struct {
	log     zerolog.Logger
	metrics Metrics
	now     func() time.Time

	mu    sync.Mutex
	since time.Time // zero while Kafka is reachable
}

func newOutage(log zerolog.Logger, m Metrics) *outage {
	return &outage{log: log, metrics: m, now: time.Now}
}

// begin notes that Kafka could not be reached because of err, and logs
// it if no outage is open. It reports whether it opened one.
func (o *outage) begin(err error) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.since.IsZero() {
		return false
	}
	o.since = o.now()
	o.log.Info().Err(err).Msgf("Kafka unreachable: %v; retrying", err)
	return true
}

// open reports whether an outage is open.
func (o *outage) open() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return !o.since.IsZero()
}

// resumed notes that Kafka accepted a commit, and ends the open outage.
func (o *outage) resumed() {
	o.mu.Lock()
	if o.since.IsZero() {
		o.mu.Unlock()
		return
	}
	d := o.now().Sub(o.since)
	o.since = time.Time{}
	o.mu.Unlock()
	o.log.Info().Dur("outage", d).Msgf("Kafka reachable again after %s", d.Round(100*time.Millisecond))
	o.metrics.KafkaOutage(d)
}

// OnBrokerConnect implements kgo.HookBrokerConnect: a dial that failed
// (refused, timed out, no route) begins an outage.
func (o *outage) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	// A dial that a closing client cancelled says nothing about Kafka.
	if err == nil || errors.Is(err, kgo.ErrClientClosed) || errors.Is(err, context.Canceled) ||
		strings.Contains(err.Error(), "operation was canceled") {
		return
	}
	o.begin(err)
}

var _ kgo.HookBrokerConnect = (*outage)(nil)

// unreachable reports whether err, which ended a session, says that Kafka
// could not be reached (a transport error, or a retriable broker error
// such as a partition without a leader or a coordinator that moved),
// rather than that it refused something (a transaction timed out, a
// checkpoint behind).
func unreachable(err error) bool {
	var ne net.Error
	switch {
	case errors.As(err, &ne), closedAtOnce(err),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET):
		return true
	case errors.Is(err, ErrTransactionTimedOut), errors.Is(err, ErrCheckpointBehind):
		return false
	}
	return kerr.IsRetriable(err)
}
