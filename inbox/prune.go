package inbox

import (
	"context"
	"fmt"
	"time"
)

// Prune deletes this consumer's inbox rows consumed more than olderThan
// ago (by the database clock), batch rows per statement and transaction
// so that locks stay short, and returns how many it deleted. A pruned
// event that is delivered again is applied again: keep rows longer than
// any redelivery or replay can reach back.
func (c *Consumer) Prune(ctx context.Context, olderThan time.Duration, batch int) (int64, error) {
	if batch < 1 {
		return 0, fmt.Errorf("inbox: prune batch %d: want at least 1", batch)
	}
	var total int64
	for {
		res, err := c.cfg.DB.ExecContext(ctx, c.st.prune, c.cfg.ConsumerName, olderThan.Microseconds(), batch)
		if err != nil {
			return total, fmt.Errorf("inbox: pruning %s: %w", c.cfg.Table, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("inbox: pruning %s: %w", c.cfg.Table, err)
		}
		total += n
		if n < int64(batch) {
			return total, nil
		}
	}
}
