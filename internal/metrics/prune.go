package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// prunes counts the outbox prunes of run's --prune-interval.
type prunes struct {
	runs    *prometheus.CounterVec
	deleted prometheus.Counter
	cutoff  prometheus.Gauge
}

func newPrunes(reg *prometheus.Registry) *prunes {
	p := &prunes{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "prune", Name: "runs_total",
			Help: "Scheduled prunes of the outbox tables (--prune-interval), by result: ok or failed.",
		}, []string{"result"}),
		deleted: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "prune", Name: "rows_deleted_total",
			Help: "Outbox rows the scheduled prunes deleted.",
		}),
		cutoff: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "prune", Name: "cutoff_timestamp_seconds",
			Help: "The cutoff of the last prune that ran: rows created before it were deleted; 0 before any.",
		}),
	}
	for _, r := range []string{"ok", "failed"} {
		p.runs.WithLabelValues(r)
	}
	reg.MustRegister(p.runs, p.deleted, p.cutoff)
	return p
}

// Pruned reports a scheduled prune that deleted rows created before
// cutoff (zero when it failed before finding one) and ended with err.
func (m *Metrics) Pruned(deleted int64, cutoff time.Time, err error) {
	result := "ok"
	if err != nil {
		result = "failed"
	}
	m.prunes.runs.WithLabelValues(result).Inc()
	m.prunes.deleted.Add(float64(deleted))
	if !cutoff.IsZero() {
		m.prunes.cutoff.Set(float64(cutoff.UnixNano()) / 1e9)
	}
}
