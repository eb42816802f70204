package relay

import (
	"context"
	"fmt"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/gtid"
)

// startPosition returns where to start: the stored checkpoint cp if
// there is one, otherwise the configured start.
func (r *Relay) startPosition(ctx context.Context, cp *checkpoint.Checkpoint) (*gtid.Set, error) {
	if cp == nil {
		return r.startAt(ctx, r.cfg.Start)
	}
	server := r.source.Server()
	if gtid.Flavor(cp.Flavor) != server.Flavor {
		return nil, fmt.Errorf("checkpoint %q was written for a %s server but %s is %s; use another --name or reset the checkpoint", r.cfg.Name, cp.Flavor, r.cfg.Source, server.Flavor)
	}
	set, err := gtid.Parse(server.Flavor, cp.GTIDSet)
	if err != nil {
		return nil, fmt.Errorf("stored checkpoint %q: %w", r.cfg.Name, err)
	}
	return set, nil
}
