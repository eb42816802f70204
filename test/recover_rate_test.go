package test

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/test/harness"
)

var recoverRowsRE = regexp.MustCompile(`binlog_router_recover_rows_total\{outcome="scanned"\} ([0-9.e+]+)`)

var recoverReadRE = regexp.MustCompile(`\(rows read in ([0-9.]+[a-zµ]+)\)`)

// TestRecoverRate: --recover-rate holds the reads of a window to that
// many rows per second, so 200 rows at 25 per second take at least 8
// seconds (7 waits of a second after the first chunk of 25, the last
// chunk's); the progress line every 5 seconds gives the rows scanned,
// skipped, published, the rate and the rows and time left, and
// --metrics-addr serves the counts meanwhile; every row is published.
func TestRecoverRate(t *testing.T) {
	const rows, rate = 200, 25
	rng := harness.FaultRand(t)
	e := harness.NewEnv(t, harness.EnvOpts{})
	w := harness.NewWriter(e.DB, rng, "agg", 8, 0)
	for range rows / 5 {
		require.NoError(t, w.Tx(t.Context(), 5))
	}
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	start := time.Now()
	rec := harness.StartCommand(t, "recover", e.Args("recover-rate", "--since", since, "--recover-rate", "25", "--metrics-addr", "127.0.0.1:0")...)
	// The counts are served while it reads.
	base := "http://" + metricsAddr(t, rec)
	var scrapes int
	var scanned float64
	harness.Eventually(t, time.Minute, "binlog_router_recover_rows_total{outcome=\"scanned\"} > 0", func() bool {
		_, body := getURL(t, base+"/metrics")
		scrapes++
		if m := recoverRowsRE.FindStringSubmatch(body); m != nil {
			scanned, _ = strconv.ParseFloat(m[1], 64)
		}
		return scanned > 0
	})
	require.True(t, rec.Running(), "the metrics came while recover read")
	t.Logf("metrics: %v rows scanned after %d scrapes", scanned, scrapes)
	code := rec.Wait(time.Minute)
	took := time.Since(start)
	res := harness.CLIResult{Code: code, Stdout: rec.Out.String(), Stderr: rec.Out.String()}
	require.Equal(t, 0, res.Code, "recover: %s", harness.Tail(res.Stderr, 3000))
	n, known, pub, _ := recoverTotals(t, res)
	assert.Equal(t, []int{rows, 0, rows}, []int{n, known, pub}, "rows, known, published")
	m := recoverReadRE.FindStringSubmatch(res.Stdout)
	require.NotNil(t, m, res.Stdout)
	reading, err := time.ParseDuration(m[1])
	require.NoError(t, err)
	t.Logf("%d rows at %d rows/s: read in %s, recover took %s", rows, rate, reading, took.Round(time.Millisecond))
	want := time.Duration(rows/rate) * time.Second
	assert.GreaterOrEqual(t, reading, want, "the reads are held to the rate")
	assert.GreaterOrEqual(t, took, want)

	var progress map[string]any
	for _, line := range strings.Split(res.Stderr, "\n") {
		if strings.Contains(line, `"message":"recovering"`) {
			require.NoError(t, json.Unmarshal([]byte(line), &progress), line)
			break
		}
	}
	require.NotNil(t, progress, "a progress line after 5 s:\n%s", harness.Tail(res.Stderr, 20))
	t.Logf("progress: %v", progress)
	scanned, _ = progress["rows_scanned"].(float64)
	assert.Greater(t, scanned, 0.0)
	assert.Less(t, scanned, float64(rows))
	assert.Contains(t, progress, "skipped")
	assert.Contains(t, progress, "published")
	assert.InDelta(t, rate, progress["rows_per_second"], rate/2, "the rate shown")
	left, _ := progress["table_rows_left_estimate"].(float64)
	assert.InDelta(t, float64(rows)-scanned, left, 10, "rows left: an AUTO_INCREMENT key's range")
	assert.Contains(t, progress, "table_time_left")
}
