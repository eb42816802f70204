package replay

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
)

// sink receives the replayed records.
type sink interface {
	// add hands over one record; it may block while buffers are full. The
	// record's bytes must stay unchanged until the next commit returns.
	add(ctx context.Context, rec *kgo.Record) error
	// commit returns once every record added since the last commit is
	// durable and visible to read_committed consumers, as a whole. If it
	// returns an error, none of those records is visible.
	commit(ctx context.Context) error
	// abort drops the records added since the last commit.
	abort()
	// close releases the connections.
	close()
}
