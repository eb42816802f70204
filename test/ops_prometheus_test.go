package test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/binlog-router/binlog-router/deploy"
	"github.com/binlog-router/binlog-router/test/harness"
)

// TestPrometheusAlerts runs a real Prometheus server (Debian's prometheus
// package) on loopback, scraping a router every second and evaluating the
// alerting rules of deploy/ every second, while an application writes.
// The rules are the shipped ones with shorter `for:` durations and a few
// thresholds lowered (alertRewrites); their expressions are otherwise
// unchanged. It then causes faults, one after another: a bad row
// dead-lettered, Kafka stopped, the router killed. Through Prometheus'
// HTTP API it checks that each fault's alerts go pending or firing, that
// no other alert ever does, and that every query of the Grafana dashboard
// returns data.
func TestPrometheusAlerts(t *testing.T) {
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus not found: install Debian's prometheus package (apt-get install prometheus) to run the alerting rules against a router")
	}
	rng := harness.FaultRand(t)
	e := kfakeEnv(t)
	dlq := e.Prefix + ".dlq"
	r := harness.StartRouter(t, e.Args("alerts", "--metrics-addr", "127.0.0.1:0",
		"--on-invalid", "dead-letter", "--dead-letter-topic", dlq,
		"--transaction-timeout", "6s", "--kafka-timeout", "2m")...)
	target := metricsAddr(t, r)
	l := harness.StartLoad(t, harness.NewWriter(e.DB, rng, "agg", 20, 0), 200)
	p := startPrometheus(t, promBin, target, testRules(t))
	alerts := p.watchAlerts(t)
	testStart := time.Now()

	// Healthy: the router is scraped, routes and is ready.
	var up, ready, routed float64
	if err := harness.Poll(30*time.Second, func() bool {
		up, ready = p.value(t, `up{job="binlog-router"}`), p.value(t, `binlog_router_ready`)
		routed = p.value(t, `sum(rate(binlog_router_events_routed_total[5s]))`)
		return up == 1 && ready == 1 && routed > 0
	}); err != nil {
		t.Fatalf("Prometheus scraping a ready router: %v (up %v, ready %v, events routed/s %v)", err, up, ready, routed)
	}
	healthy := time.Now()

	// A bad row (no event_type) goes to the dead-letter topic.
	e.InsertTx(harness.Event{ID: "5b0c1b4e-7a35-4c89-9a0b-1c1d2e3f4a5b", AggType: "order", AggID: "bad", Type: "", Payload: ptr(`{}`)})
	deadLetter := time.Now()
	alerts.await(t, "BinlogRouterDeadLetters", "firing", deadLetter, 30*time.Second)

	// Every dashboard query returns data from the running router (the
	// dead-letter panel too, now that there is one).
	p.checkDashboard(t)

	// Kafka answers no produce request: the router's flush waits with
	// its Kafka transaction open, which ages towards its timeout.
	held, release := holdProduce(t, e)
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		t.Fatal("the router sent no produce request within 30s")
	}
	produceHeld := time.Now()
	alerts.await(t, "BinlogRouterTransactionTimeoutNear", "pending", produceHeld, 45*time.Second)
	release()

	// Kafka stops. The router waits for it (--kafka-timeout 2m), starting
	// new sessions; its readiness window is 30 s.
	e.Kafka.Close()
	kafkaStopped := time.Now()
	for _, a := range []string{"BinlogRouterKafkaUnreachable", "BinlogRouterLagHigh", "BinlogRouterCheckpointStale", "BinlogRouterNotReady"} {
		alerts.await(t, a, "pending", kafkaStopped, 45*time.Second)
	}
	r.MustRun("Kafka stopped")

	// The router dies.
	r.Kill()
	killed := time.Now()
	alerts.await(t, "BinlogRouterDown", "firing", killed, 30*time.Second)
	l.Stop()

	// No alert went pending outside the phases that explain it.
	phases := []alertPhase{
		{"starting", testStart, []string{"BinlogRouterNotReady", "BinlogRouterMissing"}},
		{"healthy", healthy, nil},
		{"dead letter", deadLetter, []string{"BinlogRouterDeadLetters"}},
		{"produce held", produceHeld, []string{"BinlogRouterDeadLetters", "BinlogRouterTransactionTimeoutNear",
			"BinlogRouterLagHigh", "BinlogRouterCheckpointStale", "BinlogRouterErrorRate"}},
		{"Kafka stopped", kafkaStopped, []string{"BinlogRouterDeadLetters", "BinlogRouterKafkaUnreachable",
			"BinlogRouterTransactionTimeoutNear", "BinlogRouterLagHigh", "BinlogRouterCheckpointStale",
			"BinlogRouterNotReady", "BinlogRouterErrorRate"}},
		// Alerts over a range of samples outlive the router's last scrape.
		{"router killed", killed, []string{"BinlogRouterDown", "BinlogRouterDeadLetters", "BinlogRouterKafkaUnreachable",
			"BinlogRouterErrorRate", "BinlogRouterLagHigh", "BinlogRouterCheckpointStale", "BinlogRouterNotReady",
			"BinlogRouterTransactionTimeoutNear"}},
	}
	alerts.stop()
	alerts.check(t, phases)
	t.Logf("alerts seen:\n%s", alerts.report(map[string]time.Time{
		"dead letter": deadLetter, "produce held": produceHeld, "Kafka stopped": kafkaStopped, "router killed": killed}))
	t.Logf("whole test %s, %s", time.Since(testStart).Round(time.Second), l)
}

// alertRewrites are the changes testRules makes to the shipped rules, so
// that the alerts fire within seconds: thresholds of seconds or counts
// lowered (each must occur exactly once in its rule's expression). Every
// `for:` becomes 1s.
var alertRewrites = map[string][][2]string{
	"BinlogRouterLagHigh":         {{"> 60", "> 5"}},
	"BinlogRouterCheckpointStale": {{"> 120", "> 5"}},
}

// testRules writes the shipped rules, rewritten by alertRewrites, to a
// file and returns its path.
func testRules(t *testing.T) string {
	t.Helper()
	f, err := deploy.Rules()
	if err != nil {
		t.Fatal(err)
	}
	rewritten := map[string]bool{}
	for gi := range f.Groups {
		for ri := range f.Groups[gi].Rules {
			rule := &f.Groups[gi].Rules[ri]
			if rule.For != "" {
				rule.For = "1s"
			}
			for _, rw := range alertRewrites[rule.Alert] {
				if n := strings.Count(rule.Expr, rw[0]); n != 1 {
					t.Fatalf("%s: %q occurs %d times in %q, want once", rule.Alert, rw[0], n, rule.Expr)
				}
				rule.Expr = strings.Replace(rule.Expr, rw[0], rw[1], 1)
			}
			rewritten[rule.Alert] = true
		}
	}
	for name := range alertRewrites {
		if !rewritten[name] {
			t.Fatalf("no alert %s in the rule file", name)
		}
	}
	b, err := yaml.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// promServer is a private Prometheus server.
type promServer struct {
	base string // http://127.0.0.1:port
	out  *harness.LockedBuffer
}

// startPrometheus starts Prometheus on a free loopback port with its own
// data directory, scraping target as job binlog-router and evaluating
// rules, both every second. It is killed when the test ends.
func startPrometheus(t *testing.T, bin, target, rules string) *promServer {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - %s
scrape_configs:
  - job_name: binlog-router
    static_configs:
      - targets: [%q]
`, rules, target)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freeTCPPort(t))
	p := &promServer{base: "http://" + addr, out: &harness.LockedBuffer{}}
	cmd := exec.Command(bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = p.out, p.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting prometheus: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("prometheus log:\n%s", harness.Tail(p.out.String(), 40))
		}
	})
	harness.Eventually(t, 30*time.Second, "prometheus ready", func() bool {
		select {
		case <-done:
			t.Fatalf("prometheus exited:\n%s", p.out.String())
		default:
		}
		resp, err := http.Get(p.base + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return p
}

// api GETs path (with query) from Prometheus' HTTP API into data.
func (p *promServer) api(path string, query url.Values, data any) error {
	resp, err := http.Get(p.base + path + "?" + query.Encode())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if body.Status != "success" {
		return fmt.Errorf("%s %s: %s", path, query.Encode(), body.Error)
	}
	return json.Unmarshal(body.Data, data)
}

// query runs an instant query and returns its samples' values by their
// labels; an error fails the test.
func (p *promServer) query(t testing.TB, q string) map[string]string {
	t.Helper()
	var data struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	if err := p.api("/api/v1/query", url.Values{"query": {q}}, &data); err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	out := map[string]string{}
	for _, r := range data.Result {
		out[fmt.Sprint(r.Metric)] = fmt.Sprint(r.Value[1])
	}
	return out
}

// value is the value of q's only sample, -1 when it has none.
func (p *promServer) value(t testing.TB, q string) float64 {
	t.Helper()
	res := p.query(t, q)
	if len(res) != 1 {
		return -1
	}
	for _, v := range res {
		var f float64
		if _, err := fmt.Sscan(v, &f); err != nil {
			t.Fatalf("query %s: value %q: %v", q, v, err)
		}
		return f
	}
	return -1
}

// checkDashboard runs every query of the Grafana dashboard, with its
// variables set to this job, and fails for each that returns no data
// within 20 s.
func (p *promServer) checkDashboard(t *testing.T) {
	t.Helper()
	queries, err := deploy.DashboardQueries()
	if err != nil {
		t.Fatal(err)
	}
	vars := strings.NewReplacer("$__rate_interval", "10s", "$job", "binlog-router", "$instance", ".+")
	deadline := time.Now().Add(20 * time.Second)
	for _, dq := range queries {
		q := vars.Replace(dq.Expr)
		for len(p.query(t, q)) == 0 {
			if time.Now().After(deadline) {
				t.Errorf("dashboard panel %q: query %s returns no data", dq.Panel, q)
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	t.Logf("%d dashboard queries checked", len(queries))
}

// alertWatch polls /api/v1/alerts and keeps, for each alert and state,
// when it was first and last seen.
type alertWatch struct {
	p      *promServer
	mu     sync.Mutex
	seen   map[alertState]*alertSeen
	err    error
	cancel context.CancelFunc
	done   chan struct{}
}

type alertState struct{ name, state string }

type alertSeen struct{ first, last time.Time }

// watchAlerts polls every 200 ms until stop: states last at least one
// evaluation (1 s), so none is missed.
func (p *promServer) watchAlerts(t *testing.T) *alertWatch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &alertWatch{p: p, seen: map[alertState]*alertSeen{}, cancel: cancel, done: make(chan struct{})}
	go w.run(ctx)
	t.Cleanup(w.stop)
	return w
}

func (w *alertWatch) run(ctx context.Context) {
	defer close(w.done)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		var data struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
				State  string            `json:"state"`
			} `json:"alerts"`
		}
		err := w.p.api("/api/v1/alerts", nil, &data)
		now := time.Now()
		w.mu.Lock()
		if err != nil && w.err == nil {
			w.err = err
		}
		for _, a := range data.Alerts {
			k := alertState{a.Labels["alertname"], a.State}
			if s, ok := w.seen[k]; ok {
				s.last = now
			} else {
				w.seen[k] = &alertSeen{first: now, last: now}
			}
		}
		w.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (w *alertWatch) stop() {
	w.cancel()
	<-w.done
}

// await waits until alert name has been seen in state ("pending" or
// "firing"; firing counts as past pending) since since, and logs how long
// after since that was.
func (w *alertWatch) await(t *testing.T, name, state string, since time.Time, timeout time.Duration) {
	t.Helper()
	states := []string{state}
	if state == "pending" {
		states = append(states, "firing")
	}
	var at time.Time
	var reached string
	harness.Eventually(t, timeout, fmt.Sprintf("alert %s %s", name, state), func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, s := range states {
			if seen, ok := w.seen[alertState{name, s}]; ok && !seen.last.Before(since) {
				at, reached = seen.first, s
				if at.Before(since) {
					at = since
				}
				return true
			}
		}
		return false
	})
	t.Logf("%s %s %s after the fault", name, reached, at.Sub(since).Round(100*time.Millisecond))
}

// alertPhase is a part of the test, from start until the next phase's,
// and the alerts that may be pending or firing during it.
type alertPhase struct {
	name    string
	start   time.Time
	allowed []string
}

// check fails for every alert seen pending or firing during a phase that
// does not allow it, and if polling the API failed.
func (w *alertWatch) check(t *testing.T, phases []alertPhase) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		t.Errorf("polling /api/v1/alerts: %v", w.err)
	}
	for k, s := range w.seen {
		for i, ph := range phases {
			end := time.Now()
			if i+1 < len(phases) {
				end = phases[i+1].start
			}
			if s.first.Before(end) && !s.last.Before(ph.start) && !slices.Contains(ph.allowed, k.name) {
				t.Errorf("alert %s was %s during %q, which does not explain it (seen %s to %s after the test began)",
					k.name, k.state, ph.name, s.first.Sub(phases[0].start).Round(100*time.Millisecond), s.last.Sub(phases[0].start).Round(100*time.Millisecond))
			}
		}
	}
}

// report lists every alert and state seen, with the time from the latest
// fault before it.
func (w *alertWatch) report(faults map[string]time.Time) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var lines []string
	for k, s := range w.seen {
		fault, at := "the start", time.Time{}
		for name, ft := range faults {
			if !ft.After(s.first) && ft.After(at) {
				fault, at = name, ft
			}
		}
		since := ""
		if !at.IsZero() {
			since = fmt.Sprintf(" %s after %s", s.first.Sub(at).Round(100*time.Millisecond), fault)
		} else {
			since = " before any fault"
		}
		lines = append(lines, fmt.Sprintf("  %-36s %-8s first%s, for %s", k.name, k.state, since, s.last.Sub(s.first).Round(100*time.Millisecond)))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
