package metrics

import (
	"testing"
	"time"
)

// A commit point with records observes its transaction's duration, its
// record count and the delay since the source's COMMIT; a checkpoint
// alone (no records) observes nothing.
func TestCommitLatencyHistograms(t *testing.T) {
	clk := newFakeClock()
	m := New(nil, Clock(clk.now))
	base := serve(t, m, nil)

	began := clk.now()
	clk.advance(30 * time.Millisecond)
	m.Committed("0-1-5", clk.now().Add(-2*time.Second), 40, began)
	m.Committed("0-1-6", clk.now().Add(-time.Second), 0, time.Time{}) // a checkpoint alone

	mfs := scrape(t, base)
	h := mfs["binlog_router_kafka_transaction_duration_seconds"].GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 1 || h.GetSampleSum() != 0.03 {
		t.Errorf("transaction duration: %d samples summing to %v, want 1 of 0.03", h.GetSampleCount(), h.GetSampleSum())
	}
	h = mfs["binlog_router_kafka_transaction_records"].GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 1 || h.GetSampleSum() != 40 {
		t.Errorf("records per transaction: %d samples summing to %v, want 1 of 40", h.GetSampleCount(), h.GetSampleSum())
	}
	h = mfs["binlog_router_commit_delay_seconds"].GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 1 || h.GetSampleSum() != 2 {
		t.Errorf("commit delay: %d samples summing to %v, want 1 of 2", h.GetSampleCount(), h.GetSampleSum())
	}
}
