package docker_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/devenv"
)

// TestK8sHAPairOnMariaDB runs the two replicas of k8s-ha.yaml as two router
// processes with the manifest's environment (only the addresses, the
// password and the name changed) against a private MariaDB and Kafka, and
// probes them as the kubelet would: both answer the manifest's liveness and
// readiness paths while one is active and the other stands by, the standby
// answers 503 on /readyz the whole time, and when the active router stops the
// standby becomes ready.
func TestK8sHAPairOnMariaDB(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts MariaDB, Kafka and two routers")
	}
	m, err := decodeManifest(readManifest(t, "k8s-ha.yaml"))
	require.NoError(t, err)
	require.Len(t, m.deployments, 1)
	c, _, err := routerMetricsPort(m.deployments[0])
	require.NoError(t, err)
	liveness, readiness := c.LivenessProbe.HTTPGet.Path, c.ReadinessProbe.HTTPGet.Path

	bin := routerBinary(t)
	db := devenv.NewMariaDB(t, devenv.MariaDBConfig{})
	k := devenv.NewKafka(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	root, err := db.DB("") // multiStatements=true
	require.NoError(t, err)
	defer root.Close()
	_, err = root.ExecContext(ctx, string(readManifest(t, "mysql-init.sql")))
	require.NoError(t, err, "applying mysql-init.sql to MariaDB")

	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	require.Equal(t, "true", env["BINLOG_ROUTER_HA"])
	env["BINLOG_ROUTER_MYSQL_PASSWORD"] = initUsers(t)[env["BINLOG_ROUTER_MYSQL_USER"]]
	env["BINLOG_ROUTER_MYSQL_ADDR"] = db.Addr()
	env["BINLOG_ROUTER_KAFKA_BROKERS"] = strings.Join(k.Brokers, ",")
	env["BINLOG_ROUTER_NAME"] += "-" + uuid.NewString()[:8]

	type replica struct {
		p    *routerProcess
		base string
	}
	var rs []replica
	for range 2 {
		e := maps.Clone(env)
		addr := freeAddr(t)
		e["BINLOG_ROUTER_METRICS_ADDR"] = addr
		rs = append(rs, replica{startRouter(t, bin, e), "http://" + addr})
	}
	status := func(r replica, path string) int {
		resp, err := http.Get(r.base + path)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	// One of the two becomes ready: the active router.
	active := -1
	for active < 0 {
		for i, r := range rs {
			select {
			case <-r.p.done:
				t.Fatalf("router %d exited (%v):\n%s", i, r.p.err, r.p.output())
			default:
			}
			if status(r, "/readyz") == http.StatusOK {
				active = i
			}
		}
		if active < 0 {
			select {
			case <-ctx.Done():
				t.Fatalf("no router became ready: %v", ctx.Err())
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	standby := rs[1-active]

	// For failureThreshold x periodSeconds of the readiness probe (the time
	// the kubelet needs to act on failures), the standby stays alive and
	// Ready by the manifest's probes and not ready by /readyz; the active
	// router is all three.
	window := time.Duration(cmp.Or(c.ReadinessProbe.FailureThreshold, 3)*cmp.Or(c.ReadinessProbe.PeriodSeconds, 10)) * time.Second
	t.Logf("router %d active; watching the standby for %s", active, window)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for end := time.Now().Add(window); time.Now().Before(end); <-tick.C {
		for _, p := range []string{liveness, readiness} {
			require.Equal(t, http.StatusOK, status(standby, p), "standby on %s (liveness/readiness probe)", p)
			require.Equal(t, http.StatusOK, status(rs[active], p), "active router on %s", p)
		}
		require.Equal(t, http.StatusServiceUnavailable, status(standby, "/readyz"), "a standby is not ready on /readyz")
		require.Equal(t, http.StatusOK, status(rs[active], "/readyz"), "the active router stays ready")
	}

	// A drain evicts the active router: SIGTERM, and the standby takes over.
	code, err := rs[active].p.stop(20 * time.Second)
	require.NoError(t, err)
	require.Equal(t, 0, code, "router output:\n%s", rs[active].p.output())
	start := time.Now()
	require.NoError(t, pollHTTP(ctx, standby.p, standby.base+"/readyz"))
	t.Logf("standby ready on /readyz %s after the active router stopped", time.Since(start).Round(time.Millisecond))
	require.Equal(t, http.StatusOK, status(standby, liveness), fmt.Sprintf("%s after the takeover", liveness))
}
