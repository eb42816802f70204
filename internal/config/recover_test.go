package config

import (
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/recovery"
)

// TestRecoverRateBound: --recover-rate takes 0 (no cap) to 1000000 rows
// per second, and reaches the recovery's configuration.
func TestRecoverRateBound(t *testing.T) {
	for _, c := range []struct {
		rate int
		err  string
	}{
		{0, ""},
		{1, ""},
		{1_000_000, ""},
		{1_000_001, "--recover-rate"},
		{-1, "--recover-rate -1"},
	} {
		cfg := Config{Recover: RecoverFlags{Chunk: 1, MaxKnownIDs: 1, Rate: c.rate, Where: "true"}}
		var errs []string
		for _, b := range cfg.recoverBounds() {
			if err := b.check(); err != nil {
				errs = append(errs, err.Error())
			}
		}
		if c.err == "" {
			assert.Empty(t, errs, "rate %d", c.rate)
			continue
		}
		require.Len(t, errs, 1, "rate %d", c.rate)
		assert.Contains(t, errs[0], c.err)
	}
	cfg := Default()
	cfg.Recover.Rate = 250
	assert.Equal(t, 250, cfg.RecoverConfig(zerolog.Nop(), time.Time{}, nil, "x").Rate)
}

// TestRecoverOrderChoice: --recover-order takes auto (the default), key
// or created-at, and reaches the recovery's configuration.
func TestRecoverOrderChoice(t *testing.T) {
	assert.Equal(t, "auto", Default().Recover.Order)
	for _, c := range []struct{ order, err string }{
		{"auto", ""}, {"key", ""}, {"created-at", ""}, {"", ""},
		{"created_at", `--recover-order "created_at": use auto, key or created-at`},
	} {
		cfg := Config{Recover: RecoverFlags{Chunk: 1, MaxKnownIDs: 1, Order: c.order, Where: "true"}}
		var errs []string
		for _, b := range cfg.recoverBounds() {
			if err := b.check(); err != nil {
				errs = append(errs, err.Error())
			}
		}
		if c.err == "" {
			assert.Empty(t, errs, "order %q", c.order)
			continue
		}
		assert.Equal(t, []string{c.err}, errs)
	}
	cfg := Default()
	cfg.Recover.Order = "created-at"
	assert.Equal(t, recovery.OrderCreatedAt, cfg.RecoverConfig(zerolog.Nop(), time.Time{}, nil, "x").Order)
}
