package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ShutdownTimeout bounds the graceful shutdown of the HTTP server.
const ShutdownTimeout = 5 * time.Second

// ReadyFunc is an extra readiness condition: a non-nil error makes /readyz
// answer 503 with its text (for example "standby: another router is
// active"). It is called on every /readyz request and must be quick.
type ReadyFunc func() error

// Server serves /metrics, /healthz and /readyz.
type Server struct {
	addr string
	done chan struct{}
	err  error
}

// Serve listens on addr (":0" picks a free port) and serves until ctx ends,
// then shuts down gracefully within ShutdownTimeout. Listening happens
// before Serve returns, so an address in use is reported here.
//
//   - /metrics: m's registry in the Prometheus exposition formats.
//   - /healthz: 200 "ok" while the process serves HTTP.
//   - /readyz: 200 while ready (if not nil) and m.Ready() pass, else 503;
//     the first line is "ready" or the reason, the second the checkpoint
//     GTID set, then a line for each partition count change of the last
//     PartitionNoteFor (PartitionChanged), which readiness ignores. binlog_router_ready is 1 exactly when /readyz would
//     answer 200.
//
// The caller must call Wait, which returns when the server has stopped.
func Serve(ctx context.Context, addr string, m *Metrics, ready ReadyFunc) (*Server, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listener: %w", err)
	}
	srv := &http.Server{
		Handler:           Handler(m, ready),
		ReadHeaderTimeout: 5 * time.Second,
	}
	s := &Server{addr: ln.Addr().String(), done: make(chan struct{})}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	go func() {
		defer close(s.done)
		select {
		case err := <-serveErr:
			s.err = fmt.Errorf("metrics server: %w", err)
			return
		case <-ctx.Done():
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			s.err = fmt.Errorf("metrics server shutdown: %w", err)
		}
		if err := <-serveErr; !errors.Is(err, http.ErrServerClosed) && s.err == nil {
			s.err = fmt.Errorf("metrics server: %w", err)
		}
	}()
	return s, nil
}

// Addr is the address the server listens on, with the actual port.
func (s *Server) Addr() string { return s.addr }

// Wait blocks until the server has stopped and returns nil after a
// graceful shutdown.
func (s *Server) Wait() error {
	<-s.done
	return s.err
}

// Handler is the mux Serve uses, for callers that run their own server.
// ready becomes part of binlog_router_ready too (the last Handler's, if
// several are made for one Metrics).
func Handler(m *Metrics, ready ReadyFunc) http.Handler {
	m.readyCheck.Store(&ready)
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.InstrumentMetricHandler(m.reg,
		promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		err := m.readiness(ready)
		status, line := http.StatusOK, "ready"
		if err != nil {
			status, line = http.StatusServiceUnavailable, "not ready: "+oneLine(err.Error())
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		set := oneLine(m.CheckpointGTIDSet())
		if set == "" {
			set = "(none yet)"
		}
		_, _ = fmt.Fprintf(w, "%s\ncheckpoint: %s\n", line, set)
		for _, l := range m.partitionLines() {
			_, _ = fmt.Fprintf(w, "%s\n", l)
		}
	})
	return mux
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
