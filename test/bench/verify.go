package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// verification is what a read_committed consumer found in a run's topics.
type verification struct {
	Expected int  `json:"expected"`
	Records  int  `json:"records"`          // committed records
	Distinct int  `json:"distinct_ids"`     // distinct "id" headers
	OK       bool `json:"exactly_expected"` // Records == Distinct == Expected
}

func (v verification) String() string {
	if v.OK {
		return fmt.Sprintf("%d of %d, all distinct", v.Records, v.Expected)
	}
	return fmt.Sprintf("MISMATCH: %d records (%d distinct ids), expected %d", v.Records, v.Distinct, v.Expected)
}

// verifyTopics reads topics to their end with read_committed isolation
// and counts the records and their distinct event ids. Control records
// are kept (and not counted) so that the end offset, which may be a
// commit marker, is seen.
func verifyTopics(ctx context.Context, adm *admin, brokers, topics []string, expected int, timeout time.Duration) (verification, error) {
	v := verification{Expected: expected}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ends, err := adm.adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return v, fmt.Errorf("listing end offsets: %w", err)
	}
	starts, err := adm.adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return v, fmt.Errorf("listing start offsets: %w", err)
	}
	assign := map[string]map[int32]kgo.Offset{}
	remaining := map[string]map[int32]int64{} // last offset still to see
	var lerr error
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			lerr = o.Err
			return
		}
		s, _ := starts.Lookup(o.Topic, o.Partition)
		if o.Offset <= s.Offset {
			return
		}
		if assign[o.Topic] == nil {
			assign[o.Topic], remaining[o.Topic] = map[int32]kgo.Offset{}, map[int32]int64{}
		}
		assign[o.Topic][o.Partition] = kgo.NewOffset().At(s.Offset)
		remaining[o.Topic][o.Partition] = o.Offset - 1
	})
	if lerr != nil {
		return v, fmt.Errorf("listing end offsets: %w", lerr)
	}
	if len(assign) == 0 {
		v.OK = expected == 0
		return v, nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ClientID("bench-verify"),
		kgo.ConsumePartitions(assign),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
		kgo.FetchMaxBytes(64<<20), kgo.FetchMaxPartitionBytes(16<<20),
	)
	if err != nil {
		return v, fmt.Errorf("verify consumer: %w", err)
	}
	defer cl.Close()
	ids := make(map[string]struct{}, expected)
	left := 0
	for _, ps := range remaining {
		left += len(ps)
	}
	for left > 0 {
		f := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return v, fmt.Errorf("reading topics after %d records: %w", v.Records, ctx.Err())
		}
		var ferr error
		f.EachError(func(t string, p int32, err error) { ferr = fmt.Errorf("fetching %s/%d: %w", t, p, err) })
		if ferr != nil {
			return v, ferr
		}
		f.EachRecord(func(r *kgo.Record) {
			if !r.Attrs.IsControl() {
				v.Records++
				for _, h := range r.Headers {
					if h.Key == "id" {
						ids[string(h.Value)] = struct{}{}
						break
					}
				}
			}
			last, ok := remaining[r.Topic][r.Partition]
			if ok && r.Offset >= last {
				delete(remaining[r.Topic], r.Partition)
				left--
			}
		})
	}
	v.Distinct = len(ids)
	v.OK = v.Records == expected && v.Distinct == expected
	return v, nil
}
