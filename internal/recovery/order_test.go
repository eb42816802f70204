package recovery

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// TestChunkOrderOnMariaDB reads tables of random (UUIDv4) keys in
// chunks of 3 on a private MariaDB: in created-at order, runs of equal
// creation times (and NULLs) that straddle chunk edges are read once
// each, in (created_at, key) order, for a TIMESTAMP(6) and a
// DATETIME(6) column, with and without an index on it, under a window;
// in key order, once each in key order. With an index on created_at
// the server reads a range of it for a chunk, sorting nothing (EXPLAIN
// of the prepared statement, 20,000 rows). planOrder chooses as
// documented and refuses created-at order without the column.
func TestChunkOrderOnMariaDB(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a MariaDB server")
	}
	m := devenv.NewMariaDB(t, devenv.MariaDBConfig{})
	db := devenv.CreateDatabase(t, m, "recovery_order")
	ctx := t.Context()
	cols := schema.DefaultColumns()
	base := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
	// Runs of equal creation times: 4, 1, 5, 3 and 2 rows, and 4 NULLs.
	var want []time.Time
	for _, r := range []struct{ n, offset int }{{4, 0}, {1, 1}, {5, 2}, {3, 3}, {2, 4}} {
		for range r.n {
			want = append(want, base.Add(time.Duration(r.offset)*time.Millisecond+time.Microsecond))
		}
	}
	const nulls = 4

	for _, tc := range []struct {
		name, typ string
		index     bool
	}{
		{"timestamp_indexed", "TIMESTAMP(6)", true},
		{"datetime_indexed", "DATETIME(6)", true},
		{"datetime_unindexed", "DATETIME(6)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table := "o_" + tc.name
			idx := ""
			if tc.index {
				idx = ", INDEX (created_at)"
			}
			_, err := db.ExecContext(ctx, "CREATE TABLE "+table+" (event_id CHAR(36) NOT NULL PRIMARY KEY, aggregate_type VARCHAR(32) NOT NULL, aggregate_id VARCHAR(32) NOT NULL, event_type VARCHAR(32) NOT NULL, payload LONGTEXT, created_at "+tc.typ+" NULL DEFAULT NULL"+idx+")")
			require.NoError(t, err)
			type row struct {
				id      string
				created time.Time // zero: NULL
			}
			var rows []row
			insert := func(created time.Time) {
				r := row{id: uuid.NewString(), created: created}
				var c any
				if !created.IsZero() {
					c = created.Format("2006-01-02 15:04:05.999999")
				}
				_, err := db.ExecContext(ctx, "SET time_zone = '+00:00'")
				require.NoError(t, err)
				_, err = db.ExecContext(ctx, "INSERT INTO "+table+" (event_id, aggregate_type, aggregate_id, event_type, payload, created_at) VALUES (?, 'order', 'o-1', 'Created', '{}', ?)", r.id, c)
				require.NoError(t, err)
				rows = append(rows, r)
			}
			for _, c := range want {
				insert(c)
			}
			for range nulls {
				insert(time.Time{})
			}
			// (created_at, key) order, NULL first, as the server sorts.
			slices.SortFunc(rows, func(a, b row) int {
				if c := a.created.Compare(b.created); c != 0 {
					return c
				}
				return strings.Compare(a.id, b.id)
			})

			s, err := inspectTable(ctx, db, schema.TableName{Database: "recovery_order", Table: table}, cols, time.UTC, false)
			require.NoError(t, err)
			plan, err := planOrder(ctx, db, s, OrderAuto, cols.CreatedAt)
			require.NoError(t, err)
			assert.Equal(t, OrderCreatedAt, plan.order, plan.reason)
			assert.Equal(t, tc.index, plan.indexed)
			if tc.index {
				assert.Empty(t, plan.warnings)
			} else {
				require.Len(t, plan.warnings, 1)
				assert.Contains(t, plan.warnings[0], "ADD INDEX (`created_at`)")
			}
			s.order = plan.order

			read := func(n int, since time.Time) []string {
				var got []string
				var from *cursor
				for chunks := 0; ; chunks++ {
					require.Less(t, chunks, 100, "the reads end")
					last, err := s.chunk(ctx, db, from, n, since, "", binlog.UUIDStandard, func(r *binlog.OutboxRow, _ *cursor) error {
						got = append(got, string(r.EventID))
						return nil
					})
					require.NoError(t, err)
					if last == nil {
						return got
					}
					from = last
				}
			}
			var all []string
			for _, r := range rows {
				all = append(all, r.id)
			}
			assert.Equal(t, all, read(3, time.Time{}), "created-at order, chunks of 3: every row once, ties and NULLs across chunk edges")
			assert.Equal(t, all, read(1, time.Time{}), "chunks of 1")
			assert.Equal(t, all[nulls+4:], read(3, base.Add(time.Millisecond)), "a window from the second run on")

			// The progress estimate runs over the creation times, whose
			// largest is read only through an index.
			kp, err := newKeyProgress(ctx, db, s, plan.indexed)
			require.NoError(t, err)
			assert.Equal(t, tc.index, kp.ok)
			if tc.index {
				assert.Equal(t, want[len(want)-1].UnixMicro(), kp.max)
				s.first = nil
				last, err := s.chunk(ctx, db, &cursor{key: rows[nulls+4].id}, 6, time.Time{}, "", binlog.UUIDStandard, func(*binlog.OutboxRow, *cursor) error { return nil })
				require.NoError(t, err)
				kp.read(s.first, 6)
				_, _, ok := kp.left(last.position(s))
				assert.True(t, ok, "an estimate from the creation times")
			}

			// A resumed read goes on after a row that is still there; one
			// deleted since (retention) restarts the table.
			p := &publisher{log: zerolog.Nop()}
			gone := rows[len(rows)-1].id
			_, err = db.ExecContext(ctx, "DELETE FROM "+table+" WHERE event_id = ?", gone)
			require.NoError(t, err)
			kept := &cursor{key: rows[nulls+1].id}
			got, err := p.resumable(ctx, db, s, kept)
			require.NoError(t, err)
			assert.Same(t, kept, got, "the row is there: go on after it")
			got, err = p.resumable(ctx, db, s, &cursor{key: gone})
			require.NoError(t, err)
			assert.Nil(t, got, "the row is gone: the created_at bound would be NULL and read nothing; read the table from its start")

			s.order = OrderKey
			got, err = p.resumable(ctx, db, s, &cursor{key: gone})
			require.NoError(t, err)
			assert.NotNil(t, got, "key order needs only the key")
			slices.Sort(all)
			all = slices.DeleteFunc(all, func(id string) bool { return id == gone })
			assert.Equal(t, all, read(3, time.Time{}), "key order: every row once")
		})
	}

	t.Run("explain", func(t *testing.T) {
		// With an index on created_at the server reads a range of it in
		// order, (created_at, key) as InnoDB keeps it: no sort per chunk.
		for _, q := range []string{
			"CREATE TABLE big (event_id CHAR(36) NOT NULL PRIMARY KEY, aggregate_type VARCHAR(32), aggregate_id VARCHAR(32), event_type VARCHAR(32), payload LONGTEXT, created_at TIMESTAMP(6) NOT NULL, INDEX (created_at))",
			"INSERT INTO big SELECT UUID(), 'order', 'o-1', 'Created', '{}', FROM_UNIXTIME(1796457600 + seq DIV 3) FROM seq_1_to_20000",
			"ANALYZE TABLE big",
		} {
			_, err := db.ExecContext(ctx, q)
			require.NoError(t, err)
		}
		s, err := inspectTable(ctx, db, schema.TableName{Database: "recovery_order", Table: "big"}, cols, time.UTC, true)
		require.NoError(t, err)
		s.order = OrderCreatedAt
		var mid string
		require.NoError(t, db.QueryRowContext(ctx, "SELECT event_id FROM big ORDER BY created_at, event_id LIMIT 1 OFFSET 10000").Scan(&mid))
		stmt, args := s.chunkQuery(&cursor{key: mid}, 1000, base.Add(-time.Hour), "aggregate_type = 'order'")
		r, err := db.QueryContext(ctx, "EXPLAIN "+stmt, args...)
		require.NoError(t, err)
		defer r.Close()
		names, err := r.Columns()
		require.NoError(t, err)
		var plan []string
		for r.Next() {
			vals := make([]sql.NullString, len(names))
			ptrs := make([]any, len(vals))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(t, r.Scan(ptrs...))
			line := map[string]string{}
			for i, n := range names {
				line[n] = vals[i].String
			}
			plan = append(plan, fmt.Sprint(line))
			if line["select_type"] == "PRIMARY" || line["select_type"] == "SIMPLE" {
				assert.Equal(t, "range", line["type"], "a range of the index: %v", line)
				assert.Equal(t, "created_at", line["key"], "%v", line)
				assert.NotContains(t, line["Extra"], "filesort", "%v", line)
			}
		}
		require.NoError(t, r.Err())
		t.Logf("%s\n%s", stmt, strings.Join(plan, "\n"))
	})

	t.Run("plan", func(t *testing.T) {
		for _, q := range []string{
			"CREATE TABLE auto_inc (id BIGINT AUTO_INCREMENT PRIMARY KEY, event_id CHAR(36), aggregate_type VARCHAR(32), aggregate_id VARCHAR(32), event_type VARCHAR(32), payload LONGTEXT, created_at TIMESTAMP(6))",
			"CREATE TABLE no_created (event_id CHAR(36) PRIMARY KEY, aggregate_type VARCHAR(32), aggregate_id VARCHAR(32), event_type VARCHAR(32), payload LONGTEXT)",
			"CREATE TABLE whole_seconds (event_id CHAR(36) PRIMARY KEY, aggregate_type VARCHAR(32), aggregate_id VARCHAR(32), event_type VARCHAR(32), payload LONGTEXT, created_at DATETIME, INDEX (created_at))",
		} {
			_, err := db.ExecContext(ctx, q)
			require.NoError(t, err)
		}
		plan := func(table string, want Order) (orderPlan, error) {
			s, err := inspectTable(ctx, db, schema.TableName{Database: "recovery_order", Table: table}, cols, time.UTC, false)
			require.NoError(t, err)
			return planOrder(ctx, db, s, want, cols.CreatedAt)
		}
		p, err := plan("auto_inc", OrderAuto)
		require.NoError(t, err)
		assert.Equal(t, orderPlan{order: OrderKey, reason: `primary key "id" is AUTO_INCREMENT: key order is insert order`}, p)
		p, err = plan("auto_inc", OrderCreatedAt)
		require.NoError(t, err)
		assert.Equal(t, OrderCreatedAt, p.order, "asked for")
		assert.Len(t, p.warnings, 1, "no index: %v", p.warnings)

		p, err = plan("no_created", OrderAuto)
		require.NoError(t, err)
		assert.Equal(t, OrderKey, p.order)
		require.Len(t, p.warnings, 1)
		assert.Contains(t, p.warnings[0], "not AUTO_INCREMENT: the events of one aggregate may be published in another order than they were committed")
		assert.Contains(t, p.warnings[0], "--column-created-at")
		p, err = plan("no_created", OrderKey)
		require.NoError(t, err)
		assert.Equal(t, orderPlan{order: OrderKey, reason: "--recover-order key"}, p, "asked for: no warning")
		_, err = plan("no_created", OrderCreatedAt)
		assert.ErrorIs(t, err, ErrUnusableTable)
		assert.ErrorContains(t, err, "--column-created-at")

		p, err = plan("whole_seconds", OrderAuto)
		require.NoError(t, err)
		assert.Equal(t, OrderCreatedAt, p.order)
		require.Len(t, p.warnings, 1, fmt.Sprint(p.warnings))
		assert.Contains(t, p.warnings[0], "whole seconds")
	})
}
