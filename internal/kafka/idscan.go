package kafka

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/acl"
)

// ErrTooManyIDs means an id scan met more distinct event ids than its
// cap (IDScan.MaxIDs).
var ErrTooManyIDs = errors.New("too many published event ids")

// IDScan says which records' event ids ScanIDs collects.
type IDScan struct {
	// Topics selects the topics read: every topic whose name matches
	// (route.TopicPattern of the topic template), internal topics
	// excluded.
	Topics *regexp.Regexp
	// Since: each partition is read from the first record whose
	// timestamp is at or after Since; the zero time reads from the start.
	Since time.Time
	// MaxIDs caps the ids kept; one more is ErrTooManyIDs. Required.
	MaxIDs int
	// HeaderKey is the header holding the event id (route.HeaderID).
	HeaderKey string
	// Idle bounds how long a partition may stay short of its end with
	// nothing fetched; then ScanIDs fails naming it. Default 30s.
	Idle time.Duration
}

// IDScanResult is what ScanIDs read.
type IDScanResult struct {
	IDs     *IDSet
	Topics  []string // the topics read, sorted
	Records int64    // records read (with an id header or not)
}

// ScanIDs reads, with read_committed isolation, every partition of the
// topics of sc from the first record at or after sc.Since (from the start
// when zero) up to the partition's last stable offset when the scan
// began, and returns the values of their sc.HeaderKey headers. Records
// of open or aborted transactions are never read. Records committed
// after the scan began may or may not be read. It fails when more than
// sc.MaxIDs distinct ids are met (ErrTooManyIDs), and when a partition
// gives nothing for sc.Idle while short of its end. opts are the
// connection options; the client is closed before it returns.
func ScanIDs(ctx context.Context, sc IDScan, opts ...kgo.Opt) (IDScanResult, error) {
	res := IDScanResult{IDs: NewIDSet()}
	defer res.IDs.seal()
	if sc.Idle <= 0 {
		sc.Idle = 30 * time.Second
	}
	adm, err := NewAdmin(opts...)
	if err != nil {
		return res, err
	}
	defer adm.Close()
	all, err := adm.ListTopics(ctx)
	if err != nil {
		return res, fmt.Errorf("listing topics: %w", acl.Hint(err, "DESCRIBE", acl.Cluster()))
	}
	for _, t := range all.Names() {
		if sc.Topics.MatchString(t) {
			res.Topics = append(res.Topics, t)
		}
	}
	sort.Strings(res.Topics)
	if len(res.Topics) == 0 {
		return res, nil
	}
	ends, err := adm.ListCommittedOffsets(ctx, res.Topics...)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return res, fmt.Errorf("reading the end offsets of %v: %w", res.Topics, err)
	}
	var starts kadm.ListedOffsets
	if sc.Since.IsZero() {
		starts, err = adm.ListStartOffsets(ctx, res.Topics...)
	} else {
		starts, err = adm.ListOffsetsAfterMilli(ctx, sc.Since.UnixMilli(), res.Topics...)
	}
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return res, fmt.Errorf("reading the start offsets of %v: %w", res.Topics, err)
	}
	from := map[string]map[int32]kgo.Offset{}
	left := map[string]map[int32]int64{} // the end offset of each partition not read to its end
	var records int64                    // the records between the start and end offsets
	starts.Each(func(o kadm.ListedOffset) {
		end, _ := ends.Lookup(o.Topic, o.Partition)
		if o.Offset >= end.Offset {
			return
		}
		if from[o.Topic] == nil {
			from[o.Topic], left[o.Topic] = map[int32]kgo.Offset{}, map[int32]int64{}
		}
		from[o.Topic][o.Partition] = kgo.NewOffset().At(o.Offset)
		left[o.Topic][o.Partition] = end.Offset
		records += end.Offset - o.Offset
	})
	// The records to read bound the ids: the set takes at most that room,
	// or the cap's, at once, and never grows by copying.
	res.IDs.reserve(int(min(records, int64(sc.MaxIDs)+1)))
	if len(from) == 0 {
		return res, nil
	}
	// Control records are kept so that the last offset below the end, a
	// commit or abort marker, is seen: a partition is done when a record
	// at end-1 was read.
	cl, err := NewClient(append(append([]kgo.Opt{}, opts...),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
		kgo.ConsumePartitions(from))...)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	for len(left) > 0 {
		pctx, cancel := context.WithTimeout(ctx, sc.Idle)
		fs := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if fs.IsClientClosed() {
			return res, errors.New("reading published event ids: client closed")
		}
		got := false
		var ferr error
		fs.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && ferr == nil {
				ferr = fmt.Errorf("reading published event ids from %s partition %d: %w", t, p, acl.Hint(err, "READ", acl.Topic(t)))
			}
		})
		if ferr != nil {
			return res, ferr
		}
		fs.EachRecord(func(r *kgo.Record) {
			got = true
			res.Records++
			if !r.Attrs.IsControl() {
				for _, h := range r.Headers {
					if h.Key == sc.HeaderKey {
						res.IDs.Add(h.Value)
						break
					}
				}
			}
			if end, ok := left[r.Topic][r.Partition]; ok && r.Offset >= end-1 {
				delete(left[r.Topic], r.Partition)
				if len(left[r.Topic]) == 0 {
					delete(left, r.Topic)
				}
			}
		})
		if res.IDs.atMost() > sc.MaxIDs && res.IDs.Len() > sc.MaxIDs {
			return res, fmt.Errorf("%w: more than %d in the outbox topics' window; raise --max-known-ids (16 bytes of memory per UUID id), or narrow the window (--since later)", ErrTooManyIDs, sc.MaxIDs)
		}
		if !got {
			for t, ps := range left {
				for p, end := range ps {
					return res, fmt.Errorf("reading published event ids: %s partition %d gave nothing for %s before its end offset %d (a compacted topic, or a broker that does not answer?)", t, p, sc.Idle, end)
				}
			}
		}
	}
	return res, nil
}
