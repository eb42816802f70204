package metrics

import "time"

type cfg struct {
	now        func() time.Time
	staleAfter time.Duration
	maxTopics  int
	maxKinds   int
	version    string
	txnTimeout time.Duration
}

func defaultCfg() cfg {
	return cfg{
		now:        time.Now,
		staleAfter: DefaultStaleAfter,
		maxTopics:  DefaultMaxTopics,
		maxKinds:   DefaultMaxKinds,
		version:    "dev",
		txnTimeout: DefaultTransactionTimeout,
	}
}

// Opt configures New.
type Opt interface{ apply(*cfg) }

type opt func(*cfg)

func (o opt) apply(c *cfg) { o(c) }

// Clock replaces time.Now, for tests. Every time this package records or
// compares comes from it.
func Clock(now func() time.Time) Opt {
	return opt(func(c *cfg) {
		if now != nil {
			c.now = now
		}
	})
}

// IdleCheckpoint is the relay's idle checkpoint interval (relay.Config's
// IdleCheckpoint). /readyz tolerates max(30s, 3×d) without a checkpoint or
// a caught-up heartbeat: a healthy relay checkpoints or reports a
// heartbeat well within that.
func IdleCheckpoint(d time.Duration) Opt {
	return opt(func(c *cfg) { c.staleAfter = max(DefaultStaleAfter, 3*d) })
}

// MaxTopics bounds the distinct values of the topic label (default 1000);
// later topics are counted under "other".
func MaxTopics(n int) Opt {
	return opt(func(c *cfg) {
		if n > 0 {
			c.maxTopics = n
		}
	})
}

// Version is the binlog-router version in binlog_router_build_info
// (default "dev").
func Version(v string) Opt {
	return opt(func(c *cfg) {
		if v != "" {
			c.version = v
		}
	})
}

// TransactionTimeout is the Kafka transaction timeout the router runs with
// (--transaction-timeout), in binlog_router_kafka_transaction_timeout_seconds
// (default DefaultTransactionTimeout).
func TransactionTimeout(d time.Duration) Opt {
	return opt(func(c *cfg) {
		if d > 0 {
			c.txnTimeout = d
		}
	})
}
