package test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/binlog-router/binlog-router/test/harness"
)

// TestStallPastTransactionTimeout stops the router (SIGSTOP) while a Kafka
// transaction is open, keeps it stopped until the broker has ended that
// transaction (DescribeTransactions), past its 2 s transaction timeout,
// then continues it (SIGCONT). The router must notice the abort, name
// the transaction timeout, start a new session from the committed
// checkpoint in-process (no exit), and deliver every row exactly once.
// On Apache Kafka the shared node aborts timed-out transactions within a
// second of their timeout
// (transaction.abort.timed.out.transaction.cleanup.interval.ms=1000).
func TestStallPastTransactionTimeout(t *testing.T) {
	rng := harness.FaultRand(t)
	var e *harness.Env
	if harness.OnApache() {
		e = harness.NewEnv(t, harness.EnvOpts{})
	} else {
		e = kfakeEnv(t)
	}
	t.Logf("broker %s", e.BrokerName())
	const name = "stall"
	probe, err := harness.NewTxnProbe(e.Kafka.Brokers, harness.RouterTxnIDs(name)...)
	require.NoError(t, err)
	defer probe.Close()
	describe := func() kadm.DescribedTransaction {
		t.Helper()
		d, err := probe.Describe()
		require.NoError(t, err)
		require.NotEmpty(t, d.State, "no state for %s", strings.Join(probe.IDs, ", "))
		return d
	}
	// Kafka transactions of about 1 s: open nearly all the time.
	r := harness.StartRouter(t, e.Args(name, "--transaction-timeout", "2s", "--commit-interval", "1s")...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	l := harness.StartLoad(t, harness.NewWriter(e.DB, rng, "agg", 20, 0), 500)
	col.WaitProgress(t, r, 200, time.Minute, "routing before the stall")

	// A stop finds a transaction open, or one that lives past its timeout,
	// only by chance: at a trickle of 500 rows/s the router commits as
	// soon as the reader is idle, so many transactions last milliseconds.
	stalls, tries := 0, 0
	for stalls < 2 {
		if tries++; tries > 12 {
			t.Fatalf("%d stalls, %d of them past the transaction timeout: the router never named the transaction timeout", tries-1, stalls)
		}
		harness.Eventually(t, 30*time.Second, "a Kafka transaction open", func() bool { return describe().State == "Ongoing" })
		require.NoError(t, r.Cmd.Process.Signal(syscall.SIGSTOP))
		stopped := describe()
		open := stopped.State == "Ongoing"
		var lived time.Duration
		if open {
			// The stall itself: until the broker ends the transaction
			// open at the stop, by aborting it at its timeout, or by an
			// EndTxn already on its way when the process stopped.
			harness.Eventually(t, 30*time.Second, "the broker ending the stalled transaction", func() bool {
				d := describe()
				return d.State != "Ongoing" || d.StartTimestamp != stopped.StartTimestamp
			})
			lived = time.Since(time.UnixMilli(stopped.StartTimestamp))
		}
		require.NoError(t, r.Cmd.Process.Signal(syscall.SIGCONT))
		if !open {
			t.Logf("stall %d: no transaction open at the stop", tries)
			continue
		}
		if lived < time.Duration(stopped.TimeoutMillis)*time.Millisecond {
			t.Logf("stall %d: no transaction timed out (committed %s after it began, as the process stopped)", tries, lived.Round(time.Millisecond))
			continue
		}
		// It lived past its timeout: the broker aborted it, unless a
		// commit on its way ended it just then; the router says which.
		if harness.Poll(20*time.Second, func() bool { return r.LogCount("--transaction-timeout 2s") > stalls || !r.Running() }) != nil {
			r.MustRun(fmt.Sprintf("after stall %d", tries))
			t.Logf("stall %d: no transaction timed out (it was committed as the process stopped)", tries)
			continue
		}
		t.Logf("stall %d: the broker ended the transaction %s after it began (timeout %d ms)", tries, lived.Round(time.Millisecond), stopped.TimeoutMillis)
		stalls++
		r.MustRun(fmt.Sprintf("after stall %d", stalls))
		col.WaitProgress(t, r, 200, time.Minute, fmt.Sprintf("routing after stall %d", stalls))
	}
	v := harness.FinishRun(t, e.DB, l, col, r, 3*time.Minute)
	t.Logf("stalls past the transaction timeout %d (in %d tries), new sessions %d, router processes 1, %s",
		stalls, tries, r.LogCount("kafka error; resuming from the committed checkpoint"), v)
	t.Logf("the router's account of a stall: %s", r.LogLine("--transaction-timeout 2s"))
	if n := r.LogCount("took over"); n > 0 {
		t.Errorf("a transaction timeout was reported as fencing by another instance %d times", n)
	}
}

// TestSecondRouterFences starts a second router with the same --name
// (without --ha) next to a running one. The second fences the first,
// which stops with exit code 1 and says that another instance took over
// and to use --ha; the second delivers everything exactly once.
func TestSecondRouterFences(t *testing.T) {
	rng := harness.FaultRand(t)
	e := kfakeEnv(t)
	const name = "twice"
	first := harness.StartRouter(t, e.Args(name)...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	l := harness.StartLoad(t, harness.NewWriter(e.DB, rng, "agg", 20, 0), 300)
	col.WaitProgress(t, first, 100, time.Minute, "the first router routing")

	args := harness.ArgsWith(e.Args(name), "--server-id", fmt.Sprint(3000+time.Now().UnixNano()%1000))
	second := harness.StartRouter(t, args...)
	code := first.Wait(time.Minute)
	log := first.Out.String()
	t.Logf("first router: exit code %d", code)
	if code != 1 {
		t.Errorf("fenced router: exit code %d, want 1", code)
	}
	for _, s := range []string{"another instance with the same --name took over", "--ha"} {
		if !strings.Contains(log, s) {
			t.Errorf("fenced router's log does not say %q:\n%s", s, harness.Tail(log, 10))
		}
	}
	v := harness.FinishRun(t, e.DB, l, col, second, 3*time.Minute)
	t.Logf("%s", v)
}

// TestShutdownTimeoutExitCode makes every produce request wait 8 s at the
// broker, stops the router (SIGTERM) with a transaction waiting for
// Kafka and a 2 s --shutdown-timeout: the router aborts and exits 4.
// Restarted with Kafka fast again, it delivers every row exactly once.
func TestShutdownTimeoutExitCode(t *testing.T) {
	rng := harness.FaultRand(t)
	e := kfakeEnv(t)
	const name = "drain"
	r := harness.StartRouter(t, e.Args(name, "--shutdown-timeout", "2s")...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	w := harness.NewWriter(e.DB, rng, "agg", 20, 0)
	l := harness.StartLoad(t, w, 200)
	col.WaitProgress(t, r, 50, time.Minute, "routing before Kafka slows down")

	var slow, slept = make(chan struct{}), make(chan struct{}, 1)
	c := e.Kafka.Cluster
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		select {
		case <-slow:
			return nil, nil, false
		default:
		}
		select {
		case slept <- struct{}{}:
		default:
		}
		c.SleepControl(func() {
			select {
			case <-slow:
			case <-time.After(8 * time.Second):
			}
		})
		return nil, nil, false
	})
	select {
	case <-slept:
	case <-time.After(30 * time.Second):
		t.Fatal("no produce request reached the broker")
	}
	began := time.Now()
	code := r.Stop(time.Minute)
	took := time.Since(began)
	close(slow)
	t.Logf("SIGTERM with a produce request held at the broker: exit code %d after %s", code, took.Round(time.Millisecond))
	if code != 4 {
		t.Errorf("exit code %d, want 4 (shutdown timeout)", code)
	}
	if took > 6*time.Second {
		t.Errorf("the stop took %s with --shutdown-timeout 2s", took)
	}
	if !strings.Contains(r.Out.String(), "--shutdown-timeout") {
		t.Errorf("the log does not name --shutdown-timeout:\n%s", harness.Tail(r.Out.String(), 10))
	}
	r.Restart()
	v := harness.FinishRun(t, e.DB, l, col, r, 3*time.Minute)
	t.Logf("after the restart: %s", v)
}
