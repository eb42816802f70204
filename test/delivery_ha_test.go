package test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/test/harness"
)

// TestHATakeover runs two routers with the same name: one is active, the
// other stands by. Killing the active one hands over to the standby within
// the session timeout, with nothing lost or duplicated.
func TestHATakeover(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	args := e.Args("ha", "--ha", "--ha-session-timeout", "6s")
	a := harness.StartRouter(t, args...)
	require.NoError(t, a.WaitLog(ctxTimeout(t, time.Minute), "this router is active"))
	b := harness.StartRouter(t, args...)
	require.NoError(t, b.WaitLog(ctxTimeout(t, time.Minute), "waiting to become the active router"))

	var (
		mu     sync.Mutex
		ids    []string
		stop   atomic.Bool
		wg     sync.WaitGroup
		count  atomic.Int64
		failed atomic.Bool // the writer stopped on an error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			ev := harness.NewEvent(fmt.Sprintf("agg-%d", i%10), "HA", fmt.Sprintf(`{"seq":%d}`, i))
			if err := harness.InsertEvent(e.DB, ev); err != nil {
				t.Errorf("insert: %v", err)
				failed.Store(true)
				return
			}
			mu.Lock()
			ids = append(ids, ev.ID)
			mu.Unlock()
			count.Add(1)
			time.Sleep(5 * time.Millisecond)
		}
	}()
	c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
	got := c.Read(50, 60*time.Second)
	require.False(t, strings.Contains(b.Out.String(), "this router is active"), "standby must not be active while the leader lives")

	killed := time.Now()
	a.Kill()
	require.NoError(t, b.WaitLog(ctxTimeout(t, time.Minute), "this router is active"))
	takeover := time.Since(killed)
	harness.NoteRecovery(t, takeover)
	t.Logf("standby took over %s after the kill", takeover)
	assert.Less(t, takeover, 20*time.Second)

	harness.Eventually(t, time.Minute, "100 more rows written after the takeover", func() bool {
		return count.Load() >= int64(len(got))+100 || failed.Load()
	})
	stop.Store(true)
	wg.Wait()
	mu.Lock()
	want := append([]string(nil), ids...)
	mu.Unlock()
	got = append(got, c.Read(len(want)-len(got), 60*time.Second)...)
	got = append(got, c.Quiet(time.Second)...)
	assert.ElementsMatch(t, want, harness.RecordIDs(got), "exactly once across the takeover")
	require.Equal(t, 0, b.Stop(20*time.Second))
}
