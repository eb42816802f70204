package test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/prune"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// TestPruneInsertLatency measures the application's single-row INSERT
// latency on an outbox table of PRUNE_LATENCY_ROWS rows (default 1
// million, 90% of them old), without prune, while prune runs at its
// defaults, and while it runs with no pause and no rate cap; it prints
// p50 and p99 of each and fails if prune at its defaults more than
// doubles p50. A measurement, not a suite: it runs only with
// PRUNE_LATENCY=1 (about 2 to 3 minutes), and its figures are in
// BENCHMARKS.md:
//
//	PRUNE_LATENCY=1 go test -count=1 -p 1 -run '^TestPruneInsertLatency$' -v ./test/
func TestPruneInsertLatency(t *testing.T) {
	if os.Getenv("PRUNE_LATENCY") != "1" {
		t.Skip("a measurement: run with PRUNE_LATENCY=1")
	}
	rows := 1_000_000
	if v := os.Getenv("PRUNE_LATENCY_ROWS"); v != "" {
		_, err := fmt.Sscan(v, &rows)
		require.NoError(t, err)
	}
	const window = 20 * time.Second
	maria := devenv.NewMariaDB(t, devenv.MariaDBConfig{ExtraArgs: []string{"--innodb-buffer-pool-size=256M"}})
	db := devenv.CreateDatabase(t, maria, "shop")
	ddl, err := schema.DDL("mariadb", "outbox", schema.DefaultColumns())
	require.NoError(t, err)
	_, err = db.Exec(ddl)
	require.NoError(t, err)

	began := time.Now()
	old := rows * 9 / 10
	for done := 0; done < rows; {
		n := min(50_000, rows-done)
		age := "INTERVAL 10 DAY"
		if done >= old {
			age = "INTERVAL 1 MINUTE"
		}
		_, err := db.Exec("INSERT INTO outbox (event_id, aggregate_type, aggregate_id, event_type, payload, created_at) " +
			"SELECT UUID(), 'order', CONCAT('agg-', seq % 1000), 'Filled', '{\"amount\":12.5,\"currency\":\"EUR\",\"note\":\"a payload of a typical size\"}', " +
			"NOW(6) - " + age + fmt.Sprintf(" FROM seq_1_to_%d", n))
		require.NoError(t, err)
		done += n
	}
	t.Logf("filled %d rows (%d created 10 days ago) in %s", rows, old, time.Since(began).Round(time.Second))

	cfg, err := mysql.ParseDSN(maria.DSN("shop"))
	require.NoError(t, err)
	root := prune.Conn{Addr: cfg.Addr, User: cfg.User, Password: cfg.Passwd}
	cutoff := time.Now().Add(-24 * time.Hour)

	results := map[string][]time.Duration{}
	measure := func(name string, pc *prune.Config) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan prune.Summary, 1)
		if pc != nil {
			pdb, err := prune.Open(ctx, root)
			require.NoError(t, err)
			defer pdb.Close()
			pc.Tables, pc.CreatedAt, pc.Cutoff = []schema.TableName{{Database: "shop", Table: "outbox"}}, "created_at", cutoff
			pc.Log = zerolog.Nop()
			go func() {
				sum, _ := prune.Run(ctx, pdb, *pc)
				done <- sum
			}()
		}
		lat := insertLatencies(t, db, window)
		cancel()
		line := fmt.Sprintf("%-28s %6d inserts  p50 %6.2f ms  p99 %6.2f ms", name, len(lat), ms(pct(lat, 50)), ms(pct(lat, 99)))
		if pc != nil {
			sum := <-done
			line += fmt.Sprintf("  prune: %d rows in %d batches, %.0f rows/s", sum.Deleted, sum.Batches, sum.Rate())
		}
		t.Log(line)
		results[name] = lat
	}
	measure("without prune", nil)
	measure("prune at its defaults", &prune.Config{})
	measure("prune, no pause, no cap", &prune.Config{Batch: prune.DefaultBatch, Pause: -1, Rate: -1})
	base, with := pct(results["without prune"], 50), pct(results["prune at its defaults"], 50)
	require.LessOrEqual(t, with, 2*base, "p50 with prune at its defaults within 2x of without")
}

// insertLatencies runs single-row autocommit INSERTs into shop.outbox, one
// after the other, for d, and returns each one's latency.
func insertLatencies(t testing.TB, db *sql.DB, d time.Duration) []time.Duration {
	t.Helper()
	var out []time.Duration
	payload := `{"amount":12.5,"currency":"EUR","note":"` + strings.Repeat("x", 40) + `"}`
	for end := time.Now().Add(d); time.Now().Before(end); {
		start := time.Now()
		_, err := db.Exec("INSERT INTO outbox (event_id, aggregate_type, aggregate_id, event_type, payload) VALUES (?, 'order', 'agg-1', 'Placed', ?)",
			uuid.NewString(), payload)
		require.NoError(t, err)
		out = append(out, time.Since(start))
	}
	return out
}

// pct is the p-th percentile of ds.
func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
