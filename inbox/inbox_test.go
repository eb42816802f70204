package inbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestIsMySQLPrimaryKeyConflict(t *testing.T) {
	for _, tc := range []struct {
		err   error
		table string
		want  bool
	}{
		{&mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'c-e1' for key 'PRIMARY'"}, "inbox", true},
		{&mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'c-e1' for key 'inbox.PRIMARY'"}, "inbox", true},
		{fmt.Errorf("wrapped: %w", &mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'c-e1' for key 'PRIMARY'"}), "inbox", true},
		// lower_case_table_names: the server names the table as stored.
		{&mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'c-e1' for key 'inbox.PRIMARY'"}, "Inbox", true},
		{&mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'c-e1' for key 'Inbox.PRIMARY'"}, "inbox", true},
		{&mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'x' for key 'orders.PRIMARY'"}, "inbox", false},
		{&mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'x' for key 'ref'"}, "inbox", false},
		{&mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'x' for key 'PRIMARY_ref'"}, "inbox", false},
		{&mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'x' for key '"}, "inbox", false},
		{&mysql.MySQLError{Number: 1213, Message: "Deadlock found when trying to get lock; try restarting transaction"}, "inbox", false},
		{mysql.ErrInvalidConn, "inbox", false},
		{errors.New("Duplicate entry for key 'PRIMARY'"), "inbox", false},
	} {
		if got := isMySQLPrimaryKeyConflict(tc.err, tc.table); got != tc.want {
			t.Errorf("isMySQLPrimaryKeyConflict(%v, %q) = %v, want %v", tc.err, tc.table, got, tc.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	for n, want := range []time.Duration{1, 2, 4, 8, 16, 32, 60, 60} {
		want *= time.Second
		for range 50 {
			got := backoff(time.Second, 60*time.Second, n+1)
			if got < want/2 || got > want {
				t.Fatalf("backoff(attempt %d) = %v, want in [%v, %v]", n+1, got, want/2, want)
			}
		}
	}
}

func TestDDLAndTableNames(t *testing.T) {
	for _, d := range []Dialect{MySQL, PostgreSQL} {
		ddl, err := DDL(d, "app.inbox")
		if err != nil || !strings.Contains(ddl, "PRIMARY KEY (consumer_name, event_id)") {
			t.Errorf("DDL(%v) = %q, %v", d, ddl, err)
		}
		for _, bad := range []string{"a.b.c", "in box", "x`y", `x"y`} {
			if _, err := DDL(d, bad); err == nil {
				t.Errorf("DDL(%v, %q) accepted", d, bad)
			}
		}
	}
	ddl, err := DDL(PostgreSQL, "app.inbox")
	if err != nil || !strings.Contains(ddl, `CREATE INDEX IF NOT EXISTS "inbox_consumed_at" ON "app"."inbox"`) {
		t.Errorf("DDL(PostgreSQL, app.inbox) = %q, %v", ddl, err)
	}
	// A table name that fits but whose index name would not.
	long := strings.Repeat("t", 60)
	if _, err := DDL(MySQL, long); err != nil {
		t.Errorf("DDL(MySQL, 60 characters): %v", err)
	}
	if _, err := DDL(PostgreSQL, long); err == nil || !strings.Contains(err.Error(), "index name") {
		t.Errorf("DDL(PostgreSQL, 60 characters) error %v, want one about the index name", err)
	}
}

func TestConfigValidate(t *testing.T) {
	_, err := New(Config{})
	if err == nil || !strings.Contains(err.Error(), "Brokers") || !strings.Contains(err.Error(), "Dialect") {
		t.Fatalf("New(Config{}) error %v, want one naming the missing fields", err)
	}
	cfg := validConfig(nil)
	cfg.MaxPollRecords, cfg.PartitionBacklog = 100, 50
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "PartitionBacklog 50") {
		t.Errorf("PartitionBacklog below MaxPollRecords: error %v", err)
	}
	cfg = validConfig(nil)
	cfg.MaxPollRecords = 2000
	c, err := New(cfg)
	if err != nil || c.cfg.PartitionBacklog != 2000 {
		t.Errorf("default PartitionBacklog with MaxPollRecords 2000: %v, %v", c, err)
	}
}

func validConfig(reg prometheus.Registerer) Config {
	db, _ := sql.Open("mysql", "") // connects to nothing until used
	return Config{
		Brokers: []string{"127.0.0.1:1"}, Topics: []string{"t"}, ConsumerName: "c",
		DB: db, Dialect: MySQL, Registerer: reg,
		Handler: func(context.Context, *sql.Tx, Event) error { return nil },
	}
}

// TestTwoConsumersOneRegistry: two consumers of one name share the
// series; neither New panics or fails.
func TestTwoConsumersOneRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, err := newMetrics("billing", reg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newMetrics("billing", reg)
	if err != nil {
		t.Fatal(err)
	}
	other, err := newMetrics("shipping", reg)
	if err != nil {
		t.Fatal(err)
	}
	a.incProcessed()
	b.incProcessed()
	other.incRetry()
	a.setLag("t", 0, 5)
	b.setLag("t", 1, 7)
	if got := gathered(t, reg, "inbox_processed_total", "billing"); len(got) != 1 || got[0] != 2 {
		t.Errorf("inbox_processed_total{consumer=billing} = %v, want [2] (shared)", got)
	}
	if a.stats().Processed != 1 || b.stats().Processed != 1 {
		t.Errorf("Stats are per consumer: %+v, %+v", a.stats(), b.stats())
	}
	if got := gathered(t, reg, "inbox_lag_records", "billing"); len(got) != 2 || got[0]+got[1] != 12 {
		t.Errorf("lag series %v, want 5 and 7", got)
	}
	a.deleteLag("t", 0)
	if got := gathered(t, reg, "inbox_lag_records", "billing"); len(got) != 1 || got[0] != 7 {
		t.Errorf("lag series after delete %v, want [7]", got)
	}
	// A different collector under a taken name is an error, not a panic.
	reg2 := prometheus.NewRegistry()
	if err := reg2.Register(prometheus.NewGauge(prometheus.GaugeOpts{Name: "inbox_retries_total", Help: "someone else's"})); err != nil {
		t.Fatal(err)
	}
	if _, err := newMetrics("clash", reg2); err == nil || !strings.Contains(err.Error(), "inbox: registering metrics") {
		t.Errorf("newMetrics over another collector of the same name: error %v", err)
	}
	if mfs, _ := reg2.Gather(); len(mfs) != 1 {
		t.Errorf("after the failed registration the registry holds %d metric families, want only the other one", len(mfs))
	}
	// Through New, as two consumers of one service would.
	reg3 := prometheus.NewRegistry()
	for range 2 {
		if _, err := New(validConfig(reg3)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBacklogPausing: a partition is paused while its backlog could not
// take another poll, resumed at half of that, and paused while its first
// record waits for a retry.
func TestBacklogPausing(t *testing.T) {
	high, low := backlogLimits(1000, 500)
	if high != 500 || low != 250 {
		t.Fatalf("backlogLimits(1000, 500) = %d, %d", high, low)
	}
	p := &partition{}
	fill := func(n int) { p.backlog = make([]*kgo.Record, n) }
	for _, step := range []struct {
		backlog, attempt int
		want             bool
	}{
		{0, 0, false}, {500, 0, false}, {501, 0, true}, {300, 0, true}, {250, 0, false},
		{400, 0, false}, {0, 1, true}, {0, 0, false}, {600, 2, true}, {600, 0, true},
	} {
		fill(step.backlog)
		p.attempt = step.attempt
		got := p.wantPaused(high, low)
		if got != step.want {
			t.Errorf("backlog %d, attempt %d, paused %v: wantPaused %v, want %v", step.backlog, step.attempt, p.paused, got, step.want)
		}
		p.paused = got
	}
	if high, low := backlogLimits(500, 500); high != 0 || low != 0 {
		t.Errorf("backlogLimits(500, 500) = %d, %d: want 0, 0 (fetch only when empty)", high, low)
	}
}

// gathered returns the values of name's series of consumer in reg.
func gathered(t *testing.T, reg *prometheus.Registry, name, consumer string) []float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "consumer" && l.GetValue() == consumer {
					switch {
					case m.GetCounter() != nil:
						out = append(out, m.GetCounter().GetValue())
					case m.GetGauge() != nil:
						out = append(out, m.GetGauge().GetValue())
					}
				}
			}
		}
	}
	return out
}
