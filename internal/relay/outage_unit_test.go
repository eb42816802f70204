package relay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestOutageLines: however many failures an outage has, it is one line
// when it begins and one when a commit ends it, with its length; a
// commit with no outage open logs nothing, and a cancelled dial opens
// none.
func TestOutageLines(t *testing.T) {
	var buf bytes.Buffer
	m := &outageMetrics{}
	o := newOutage(zerolog.New(&buf), m)
	now := time.Unix(100, 0)
	o.now = func() time.Time { return now }

	o.resumed()
	o.OnBrokerConnect(kgo.BrokerMetadata{}, 0, nil, context.Canceled)
	o.OnBrokerConnect(kgo.BrokerMetadata{}, 0, nil, kgo.ErrClientClosed)
	if buf.Len() != 0 || o.open() {
		t.Fatalf("logged %q with no outage", buf.String())
	}
	refused := fmt.Errorf("unable to dial: %w", syscall.ECONNREFUSED)
	for range 10 {
		o.OnBrokerConnect(kgo.BrokerMetadata{}, 0, nil, refused)
		o.begin(io.EOF)
		now = now.Add(420 * time.Millisecond)
	}
	o.resumed()
	o.resumed()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"message":"Kafka unreachable: unable to dial: connection refused; retrying"`) ||
		!strings.Contains(lines[1], `"message":"Kafka reachable again after 4.2s"`) || !strings.Contains(lines[1], `"outage":4200`) {
		t.Fatalf("logged:\n%s", buf.String())
	}
	if len(m.outages) != 1 || m.outages[0] != 4200*time.Millisecond {
		t.Fatalf("outages reported %v, want [4.2s]", m.outages)
	}
}

// TestUnreachable: what ends a session because Kafka could not be
// reached, and what ends it for another reason.
func TestUnreachable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		{fmt.Errorf("producing: %w", io.EOF), true},
		{syscall.ECONNRESET, true},
		{kerr.NotLeaderForPartition, true},
		{kerr.CoordinatorNotAvailable, true},
		{fmt.Errorf("commit: %w", ErrTransactionTimedOut), false},
		{ErrCheckpointBehind, false},
		{kerr.TopicAuthorizationFailed, false},
		{errors.New("something else"), false},
	} {
		if got := unreachable(c.err); got != c.want {
			t.Errorf("unreachable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
