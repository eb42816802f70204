package config

import (
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/binlog-router/binlog-router/internal/prune"
)

// ValidatePrune is Validate for `binlog-router prune`, and for run with
// --prune-interval: the flags of run, then the bounds of prune's own
// flags (pruneBounds), reading --prune-mysql-password-file.
func (c *Config) ValidatePrune() error {
	errs := []error{c.Validate()}
	for _, b := range c.pruneBounds() {
		if err := b.check(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// pruneBounds is the bounds table of prune's flags (see bound).
func (c *Config) pruneBounds() []bound {
	p := &c.Prune
	var fileErr error
	if p.MySQLPasswordFile != "" {
		pw, err := readSecret("--prune-mysql-password-file", p.MySQLPasswordFile)
		switch {
		case err != nil:
			fileErr = err
		case p.MySQLPassword != "" && p.MySQLPassword != pw:
			fileErr = fmt.Errorf("both --prune-mysql-password (or %s) and --prune-mysql-password-file are set: keep one", EnvName("prune-mysql-password"))
		default:
			p.MySQLPassword = pw
		}
	}
	return []bound{
		{flag: "older-than", missing: !p.OlderThan.Given || p.OlderThan.D <= 0, msg: "prune needs --older-than, the age of the rows to delete: e.g. --older-than 7d"},
		{flag: "prune-mysql-user", missing: p.MySQLUser == "",
			msg: "prune needs --prune-mysql-user: a user with SELECT and DELETE on the outbox tables only (docs/retention.md); the replication user --mysql-user stays read-only"},
		{flag: "prune-mysql-password-file", err: fileErr},
		{flag: "prune-margin", missing: p.Margin < 0, msg: fmt.Sprintf("--prune-margin %s: use 0 or more", p.Margin)},
		{flag: "prune-checkpoint-wait", missing: p.CheckpointWait < 0, msg: fmt.Sprintf("--prune-checkpoint-wait %s: use 0 or more", p.CheckpointWait)},
		{flag: "prune-batch", value: uint64(max(p.Batch, 0)), min: 1, max: 100000, why: "rows per DELETE, each its own transaction"},
		{flag: "prune-rate", value: uint64(max(p.Rate, 0)), min: 1, max: 1 << 31, why: "rows deleted per second at most"},
		{flag: "prune-interval", missing: p.Interval < 0, msg: fmt.Sprintf("--prune-interval %s: use 0 (never) or more", p.Interval)},
	}
}

// PruneConn is where prune connects: --mysql-addr and the MySQL TLS
// settings, with the prune user. Call after ValidatePrune.
func (c *Config) PruneConn() prune.Conn {
	return prune.Conn{Addr: c.MySQLAddr, User: c.Prune.MySQLUser, Password: c.Prune.MySQLPassword, TLS: c.readerTLS()}
}

// PruneConfig is one prune run that deletes the rows created before
// cutoff. Call after ValidatePrune.
func (c *Config) PruneConfig(log zerolog.Logger, cutoff time.Time) prune.Config {
	zone, _ := c.datetimeZone() // an invalid zone is reported by Validate
	pause := c.Prune.Pause
	if pause == 0 {
		pause = -1 // a pause of 0 given on the command line: none
	}
	return prune.Config{
		Tables: c.Tables(), CreatedAt: c.Columns.CreatedAt, Zone: zone, Cutoff: cutoff,
		Batch: c.Prune.Batch, Pause: pause, Rate: c.Prune.Rate, DryRun: c.DryRun, Log: log,
	}
}
