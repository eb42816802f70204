package test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/test/harness"
)

// TestGoMySQLDecodesWhatTheCodecCannot: rows the row codec leaves to
// go-mysql's decoder are routed the same way. MariaDB's compressed binlog
// events (log_bin_compress) are one case, a mapped column of a type the
// codec does not convert (a DECIMAL aggregate_id) the other.
func TestGoMySQLDecodesWhatTheCodecCannot(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		alter string
	}{
		{name: "compressed binlog", args: []string{"--log-bin-compress=ON", "--log-bin-compress-min-len=10"}},
		{name: "decimal aggregate_id", alter: "ALTER TABLE outbox MODIFY aggregate_id DECIMAL(20,0) NOT NULL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := harness.NewEnv(t, harness.EnvOpts{Maria: devenv.MariaDBConfig{ExtraArgs: c.args}})
			if c.alter != "" {
				e.Exec(c.alter)
			}
			payload := `{"text":"` + strings.Repeat("compressible ", 40) + `"}`
			evs := []harness.Event{harness.NewEvent("101", "Fallback", payload), harness.NewEvent("102", "Fallback", `{"n":2}`), harness.NewEvent("101", "Fallback", `{"n":3}`)}
			e.InsertTx(evs...)
			r := harness.StartRouter(t, e.Args("fallback")...)
			got := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex()).Read(len(evs), 60*time.Second)
			require.Equal(t, 0, r.Stop(20*time.Second))
			require.Len(t, got, len(evs))
			byID := map[string]harness.Event{}
			for _, ev := range evs {
				byID[ev.ID] = ev
			}
			for _, rec := range got {
				id, _ := harness.Header(rec, "id")
				ev, ok := byID[id]
				require.True(t, ok, "unknown event id %q", id)
				assert.Equal(t, e.Prefix+".Fallback", rec.Topic)
				assert.Equal(t, ev.AggID, string(rec.Key))
				assert.Equal(t, *ev.Payload, string(rec.Value))
			}
		})
	}
}
