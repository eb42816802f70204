package relay

import (
	"bytes"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/logging"
	"github.com/binlog-router/binlog-router/internal/pipeline"
	"github.com/binlog-router/binlog-router/internal/pipeline/pipelinetest"
	"github.com/binlog-router/binlog-router/internal/route"
)

// stoppableListener is the listener of a kfake broker that can stop
// listening (dials are refused, open connections are closed) and listen
// again on the same port, while kfake keeps its state: a broker stopped
// and restarted, as the client sees it.
type stoppableListener struct {
	addr  string
	conns chan net.Conn
	done  chan struct{}

	mu   sync.Mutex
	ln   net.Listener
	open []net.Conn
}

func listenStoppable(network, address string) (*stoppableListener, error) {
	ln, err := net.Listen(network, address)
	if err != nil {
		return nil, err
	}
	s := &stoppableListener{addr: ln.Addr().String(), conns: make(chan net.Conn), done: make(chan struct{})}
	s.serve(ln)
	return s, nil
}

func (s *stoppableListener) serve(ln net.Listener) {
	s.mu.Lock()
	s.ln = ln
	s.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.open = append(s.open, c)
			s.mu.Unlock()
			select {
			case s.conns <- c:
			case <-s.done:
				c.Close()
				return
			}
		}
	}()
}

// stop closes the port and every connection accepted on it.
func (s *stoppableListener) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ln.Close()
	for _, c := range s.open {
		c.Close()
	}
	s.open = nil
}

// start listens on the port again.
func (s *stoppableListener) start(t *testing.T) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		ln, err := net.Listen("tcp", s.addr)
		if err == nil {
			s.serve(ln)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("listening on %s again: %v", s.addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *stoppableListener) Accept() (net.Conn, error) {
	select {
	case c := <-s.conns:
		return c, nil
	case <-s.done:
		return nil, net.ErrClosed
	}
}

func (s *stoppableListener) Close() error {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	s.stop()
	return nil
}

func (s *stoppableListener) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ln.Addr()
}

// lockedBuffer is a log destination for several goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) lines(t *testing.T) []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// outageMetrics records the outages reported.
type outageMetrics struct {
	nopMetrics
	mu      sync.Mutex
	outages []time.Duration
}

func (m *outageMetrics) KafkaOutage(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.outages = append(m.outages, d)
}

// TestRelayOnKfakeBrokerRestart stops the only broker for three seconds
// while a row waits to be routed: the router logs one INFO line when the
// outage begins and one with its duration when routing resumes, counts
// one outage, and logs few of franz-go's connection warnings.
func TestRelayOnKfakeBrokerRestart(t *testing.T) {
	var ln *stoppableListener
	k, err := devenv.StartKfake(kfake.ListenFn(func(network, address string) (net.Listener, error) {
		l, err := listenStoppable(network, address)
		ln = l
		return l, err
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	var logs lockedBuffer
	log := zerolog.New(&logs).Level(zerolog.InfoLevel)
	m := &outageMetrics{}
	cfg := Config{Name: "unit", Config: pipeline.Config{Route: route.DefaultConfig(), Logger: log}, Metrics: m,
		Kafka: []kgo.Opt{kgo.SeedBrokers(k.Brokers...), kgo.WithLogger(logging.Kgo(log))}}
	src := pipelinetest.NewSource()
	r, err := newRelay(cfg, src)
	if err != nil {
		t.Fatal(err)
	}
	h := &kfakeRelay{t: t, k: k, src: src, r: r}
	h.src.Txn(1, 1)
	h.run()
	h.awaitCheckpoint("0-1-1")

	ln.stop()
	h.src.Txn(2, 2)
	const down = 3 * time.Second
	stopped := time.Now()
	deadline := stopped.Add(20 * time.Second)
	for !r.outage.open() {
		if time.Now().After(deadline) {
			t.Fatal("no outage noticed 20 s after the broker stopped")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(down - time.Since(stopped)) // the broker stays down for down
	ln.start(t)
	h.awaitCheckpoint("0-1-2")
	if got := h.read(kgo.ReadCommitted(), pipelinetest.EventID(2)); len(got) != 2 {
		t.Errorf("read committed %v, want %v", got, pipelinetest.IDs(1, 2))
	}

	var begins, ends, connWarns int
	for _, l := range logs.lines(t) {
		msg, _ := l["message"].(string)
		switch {
		case strings.HasPrefix(msg, "Kafka unreachable: ") && strings.HasSuffix(msg, "; retrying"):
			begins++
			t.Logf("begin: %s", msg)
			if l["level"] != "info" {
				t.Errorf("outage begin logged at %v", l["level"])
			}
		case strings.HasPrefix(msg, "Kafka reachable again after "):
			ends++
			t.Logf("end: %s (outage %v ms)", msg, l["outage"])
			d, ok := l["outage"].(float64)
			if l["level"] != "info" || !ok || d < float64((down-time.Second).Milliseconds()) {
				t.Errorf("outage end %v: want info with an outage of about %s in ms", l, down)
			}
		case connWarning(msg):
			connWarns++
		}
		if l["level"] == "warn" && strings.Contains(msg, "SASL missing") {
			t.Errorf("misleading hint logged: %v", l)
		}
	}
	t.Logf("outage lines: %d begin, %d end; franz-go connection warnings: %d", begins, ends, connWarns)
	if begins != 1 || ends != 1 {
		t.Errorf("logged %d outage begins and %d ends, want 1 and 1:\n%s", begins, ends, logs.buf.String())
	}
	// One of each of franz-go's two connection warnings for the one
	// broker address; unlimited, franz-go logs about 5 in 3 s.
	if connWarns > 2 {
		t.Errorf("%d connection warnings for one broker down %s, want at most 2", connWarns, down)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.outages) != 1 || m.outages[0] < down-time.Second {
		t.Errorf("outages reported %v, want one of about %s", m.outages, down)
	}
}

// connWarning reports franz-go's warnings about connections to a broker.
func connWarning(msg string) bool {
	return strings.HasPrefix(msg, "unable to open connection to broker") ||
		strings.HasPrefix(msg, "read from broker errored")
}
