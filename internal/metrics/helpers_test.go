package metrics

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// fakeClock is an injectable clock that moves only when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// serve starts Serve on a free loopback port and stops it at the end of
// the test, checking that it shut down cleanly.
func serve(t *testing.T, m *Metrics, ready ReadyFunc) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := Serve(ctx, "127.0.0.1:0", m, ready)
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		if err := srv.Wait(); err != nil {
			t.Errorf("server Wait: %v", err)
		}
	})
	return "http://" + srv.Addr()
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading %s: %v", url, err)
	}
	return resp.StatusCode, string(b)
}

// scrape reads /metrics over HTTP as Prometheus would.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := get(t, base+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: status %d: %s", code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v\n%s", err, body)
	}
	return mfs
}

// value is the value of the sample of family name whose labels include
// labels (name=value pairs); it fails the test if there is none.
func value(t *testing.T, mfs map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	v, ok := lookup(mfs, name, labels...)
	if !ok {
		t.Fatalf("no sample %s%v", name, labels)
	}
	return v
}

func lookup(mfs map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	mf, ok := mfs[name]
	if !ok {
		return 0, false
	}
next:
	for _, mt := range mf.GetMetric() {
		have := map[string]string{}
		for _, lp := range mt.GetLabel() {
			have[lp.GetName()] = lp.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue next
			}
		}
		switch {
		case mt.Counter != nil:
			return mt.GetCounter().GetValue(), true
		case mt.Gauge != nil:
			return mt.GetGauge().GetValue(), true
		case mt.Histogram != nil:
			return float64(mt.GetHistogram().GetSampleCount()), true
		case mt.Untyped != nil:
			return mt.GetUntyped().GetValue(), true
		}
	}
	return 0, false
}

// labelValues lists the values of label in family name.
func labelValues(mfs map[string]*dto.MetricFamily, name, label string) map[string]float64 {
	out := map[string]float64{}
	for _, mt := range mfs[name].GetMetric() {
		for _, lp := range mt.GetLabel() {
			if lp.GetName() == label {
				out[lp.GetValue()] = mt.GetCounter().GetValue() + mt.GetGauge().GetValue()
			}
		}
	}
	return out
}

// gather reads the registry directly.
func gather(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	out := make(map[string]*dto.MetricFamily, len(fams))
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}
