package metrics_test

import (
	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/metrics"
	"github.com/binlog-router/binlog-router/internal/relay"
)

// Metrics is what the relay reports to, and Metrics or a Tee is what the
// binlog stream reports to.
var (
	_ relay.Metrics   = (*metrics.Metrics)(nil)
	_ binlog.Observer = (*metrics.Metrics)(nil)
	_ binlog.Observer = (*metrics.Tee)(nil)
)
