package relay

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/kafka"
)

// failures records the kinds the relay counted as errors.
type failures struct {
	nopMetrics
	kinds []string
}

func (f *failures) Failed(kind string) { f.kinds = append(f.kinds, kind) }

func TestCheckOutcomes(t *testing.T) {
	set := func(s string) *gtid.Set {
		t.Helper()
		g, err := gtid.Parse(gtid.MariaDB, s)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	for _, tc := range []struct {
		name           string
		acked, unknown string // "" for none
		read           string
		behind         bool
	}{
		{name: "first session", read: "0-1-5"},
		{name: "read what was acknowledged", acked: "0-1-5", read: "0-1-5"},
		{name: "read beyond (another instance went on)", acked: "0-1-5", read: "0-1-9"},
		{name: "lost answer, committed", acked: "0-1-5", unknown: "0-1-7", read: "0-1-7"},
		{name: "lost answer, aborted", acked: "0-1-5", unknown: "0-1-7", read: "0-1-5"},
		{name: "behind the acknowledged commit", acked: "0-1-5", read: "0-1-4", behind: true},
		{name: "behind in another domain", acked: "0-1-5,1-1-3", read: "0-1-5,1-1-2", behind: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &failures{}
			r := &Relay{cfg: Config{Metrics: m}, log: zerolog.Nop()}
			r.cfg.KafkaTimeout = time.Minute
			var o outcomes
			if tc.acked != "" {
				o.acked = set(tc.acked)
			}
			if tc.unknown != "" {
				o.unknown = set(tc.unknown)
			}
			err := r.checkOutcomes(&o, set(tc.read))
			if got := errors.Is(err, ErrCheckpointBehind); got != tc.behind {
				t.Fatalf("checkOutcomes = %v, want behind %v", err, tc.behind)
			}
			if tc.behind != (len(m.kinds) == 1 && m.kinds[0] == "checkpoint_behind") {
				t.Errorf("errors counted %v", m.kinds)
			}
			if tc.behind && !retriableKafka(err) {
				t.Errorf("a checkpoint behind is not retried by a new session: %v", err)
			}
			if !tc.behind && o.unknown != nil {
				t.Errorf("the lost answer's outcome was not settled")
			}
		})
	}
}

// TestSessionEndedKeepsTheLostAnswer: a session that ended in a failed
// commit leaves its pending set as the unknown outcome, and its
// acknowledged checkpoint.
func TestSessionEndedKeepsTheLostAnswer(t *testing.T) {
	acked, _ := gtid.Parse(gtid.MariaDB, "0-1-5")
	pending, _ := gtid.Parse(gtid.MariaDB, "0-1-7")
	var o outcomes
	o.sessionEnded(acked, pending, fmt.Errorf("%w: EndTxn: broker gone", kafka.ErrCommitUnknown))
	if o.acked == nil || !o.acked.Equal(acked) || o.unknown == nil || !o.unknown.Equal(pending) {
		t.Fatalf("outcomes %+v", o)
	}
	o = outcomes{}
	o.sessionEnded(acked, pending, errors.New("producing records: broker gone"))
	if o.unknown != nil {
		t.Fatalf("a failure before the commit left an unknown outcome %v", o.unknown)
	}
}
