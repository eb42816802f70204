package prune

import (
	"context"
	"database/sql"
	"time"

	"github.com/rs/zerolog"

	"github.com/binlog-router/binlog-router/internal/schema"
)

// Defaults of Config, and of the flags that set it.
const (
	DefaultBatch    = 1000                   // rows per DELETE
	DefaultPause    = 100 * time.Millisecond // between two batches
	DefaultRate     = 5000                   // rows per second, at most
	DefaultProgress = 5 * time.Second        // between two progress lines
)

// Config is one prune run.
type Config struct {
	Tables    []schema.TableName // the outbox tables
	CreatedAt string             // their creation time column ("" refuses)
	// Zone is the time zone of a DATETIME creation time column; nil for
	// the server's time_zone (a TIMESTAMP column needs none).
	Zone   *time.Location
	Cutoff time.Time // rows created before it are deleted (Cutoff)
	// Batch is the most rows one DELETE deletes (default DefaultBatch);
	// with a primary key of several columns, rows that share the first
	// column's value at a batch's end go in the same batch.
	Batch int
	Pause time.Duration // after each batch (default DefaultPause; negative: none)
	// Rate caps the rows deleted per second, counted from the start
	// (default DefaultRate; negative: no cap).
	Rate     int
	DryRun   bool          // count the rows it would delete, delete nothing
	Progress time.Duration // between two progress lines (default DefaultProgress)
	Log      zerolog.Logger
}

func (c *Config) setDefaults() {
	if c.Batch <= 0 {
		c.Batch = DefaultBatch
	}
	if c.Pause == 0 {
		c.Pause = DefaultPause
	}
	if c.Rate == 0 {
		c.Rate = DefaultRate
	}
	if c.Progress <= 0 {
		c.Progress = DefaultProgress
	}
}

// Summary is what a run did.
type Summary struct {
	Cutoff  time.Time
	DryRun  bool
	Deleted int64 // rows deleted; with DryRun, rows that would be
	Batches int   // DELETE statements that deleted at least one row
	Elapsed time.Duration
}

// Rate is the rows deleted per second.
func (s Summary) Rate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Deleted) / s.Elapsed.Seconds()
}

// Run deletes the rows of cfg.Tables created before cfg.Cutoff, batch by
// batch in primary key order (see the package's promises), and returns
// what it did. db is a connection of Open. On an error or when ctx ends,
// the batches before are deleted and the Summary counts them.
func Run(ctx context.Context, db *sql.DB, cfg Config) (sum Summary, err error) {
	cfg.setDefaults()
	sum = Summary{Cutoff: cfg.Cutoff.UTC(), DryRun: cfg.DryRun}
	began := time.Now()
	defer func() { sum.Elapsed = time.Since(began) }()
	var targets []target
	for _, name := range cfg.Tables {
		t, err := inspect(ctx, db, name, cfg.CreatedAt, cfg.Cutoff, cfg.Zone)
		if err != nil {
			return sum, err
		}
		targets = append(targets, t)
	}
	if cfg.DryRun {
		for _, t := range targets {
			n, err := t.count(ctx, db)
			if err != nil {
				return sum, err
			}
			cfg.Log.Info().Str("table", t.name.String()).Time("cutoff", sum.Cutoff).Int64("rows", n).Msg("prune dry run: rows that would be deleted")
			sum.Deleted += n
		}
		return sum, nil
	}
	p := &pacer{cfg: &cfg, sum: &sum, began: began, lastLog: began}
	for _, t := range targets {
		if err := p.table(ctx, db, t); err != nil {
			return sum, err
		}
	}
	return sum, nil
}

// pacer runs the batches of one Run: the pause, the rate cap and the
// progress line.
type pacer struct {
	cfg     *Config
	sum     *Summary
	began   time.Time
	lastLog time.Time
}

func (p *pacer) table(ctx context.Context, db *sql.DB, t target) error {
	var from any
	for {
		end, err := t.batchEnd(ctx, db, from, p.cfg.Batch)
		if err != nil || end == nil {
			return err
		}
		n, err := t.deleteBatch(ctx, db, from, end)
		if err != nil {
			return err
		}
		from = end
		p.sum.Deleted += n
		if n > 0 {
			p.sum.Batches++
		}
		p.progress(t)
		if err := p.wait(ctx); err != nil {
			return err
		}
	}
}

// wait pauses after a batch: the pause, or longer when the rows deleted
// so far are ahead of the rate cap.
func (p *pacer) wait(ctx context.Context) error {
	d := p.cfg.Pause
	if p.cfg.Rate > 0 {
		due := time.Duration(float64(p.sum.Deleted) / float64(p.cfg.Rate) * float64(time.Second))
		if ahead := due - time.Since(p.began); ahead > d {
			d = ahead
		}
	}
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// progress logs the progress line every cfg.Progress.
func (p *pacer) progress(t target) {
	now := time.Now()
	if now.Sub(p.lastLog) < p.cfg.Progress {
		return
	}
	p.lastLog = now
	elapsed := now.Sub(p.began)
	p.cfg.Log.Info().Str("table", t.name.String()).Time("cutoff", p.sum.Cutoff).Int64("deleted", p.sum.Deleted).
		Int("batches", p.sum.Batches).Float64("rows_per_second", float64(p.sum.Deleted)/elapsed.Seconds()).
		Dur("elapsed", elapsed).Msg("prune progress")
}
