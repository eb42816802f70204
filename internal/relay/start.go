package relay

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/gtid"
)

// startPosition returns where to start: the stored checkpoint if there is
// one, otherwise the configured start.
func (r *Relay) startPosition(ctx context.Context) (*gtid.Set, *checkpoint.Checkpoint, error) {
	server := r.reader.Server()
	cp, err := checkpoint.Load(ctx, r.cfg.CheckpointTopic, r.cfg.Name, r.cfg.Kafka...)
	switch {
	case err == nil:
		if gtid.Flavor(cp.Flavor) != server.Flavor {
			return nil, nil, fmt.Errorf("checkpoint %q was written for a %s server but %s is %s; use another --name or reset the checkpoint", r.cfg.Name, cp.Flavor, r.cfg.Source, server.Flavor)
		}
		set, err := gtid.Parse(server.Flavor, cp.GTIDSet)
		if err != nil {
			return nil, nil, fmt.Errorf("stored checkpoint %q: %w", r.cfg.Name, err)
		}
		return set, cp, nil
	case !errors.Is(err, checkpoint.ErrCheckpointMissing):
		return nil, nil, fmt.Errorf("loading checkpoint %q: %w", r.cfg.Name, err)
	}
	if r.cfg.Start == "earliest" && server.Flavor == gtid.MariaDB {
		// An empty MariaDB position only works while the server still has
		// its very first binlog; start where its oldest binlog starts.
		_, before, err := binlog.OldestMariaDB(ctx, r.reader.DB())
		if err != nil {
			return nil, nil, fmt.Errorf("finding the oldest binlog for --start earliest: %w", err)
		}
		return before, nil, nil
	}
	set, err := ResolveStart(r.cfg.Start, server)
	return set, nil, err
}

// ResolveStart turns --start into a GTID set for a server without a
// stored checkpoint: "earliest" is everything the server still has,
// "latest" is after everything it has executed, "gtid:<set>" is explicit.
func ResolveStart(start string, server *binlog.Server) (*gtid.Set, error) {
	switch {
	case start == "earliest":
		// MySQL cannot send purged transactions: start after them. An
		// empty MariaDB position starts at the first binlog ever written
		// (the relay asks the server for its oldest binlog instead).
		if server.Flavor == gtid.MySQL {
			return server.Purged.Clone(), nil
		}
		return gtid.New(server.Flavor), nil
	case start == "latest":
		return server.Executed.Clone(), nil
	case strings.HasPrefix(start, "gtid:"):
		set, err := gtid.Parse(server.Flavor, strings.TrimPrefix(start, "gtid:"))
		if err != nil {
			return nil, fmt.Errorf("--start: %w", err)
		}
		return set, nil
	}
	return nil, fmt.Errorf("invalid start %q: use earliest, latest or gtid:<set>", start)
}
