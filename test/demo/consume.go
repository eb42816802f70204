package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// topicRegex matches the router's default topics, outbox.event.{event_type}.
const topicRegex = `^outbox\.event\..+`

// drainWindow is how long the consumer keeps reading after the last
// expected record, so that a duplicate or a rolled-back row would show.
// It proves an absence and is not a wait for a result.
const drainWindow = 300 * time.Millisecond

// consumeAll reads the outbox topics from the start with read_committed
// isolation, as a downstream service would, until every event in want has
// arrived; it fails after timeout or as soon as routerExited returns an
// error.
func consumeAll(ctx context.Context, brokers []string, want []event, routerExited func() error, timeout time.Duration) ([]*kgo.Record, error) {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(brokers...),
		kgo.ConsumeRegex(),
		kgo.ConsumeTopics(topicRegex),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.MetadataMinAge(100*time.Millisecond),
		kgo.MetadataMaxAge(250*time.Millisecond),
		kgo.FetchMaxWait(100*time.Millisecond),
	)
	if err != nil {
		return nil, fmt.Errorf("creating the consumer: %w", err)
	}
	defer cl.Close()

	missing := make(map[string]event, len(want))
	for _, ev := range want {
		missing[ev.ID] = ev
	}
	deadline := time.Now().Add(timeout)
	var recs []*kgo.Record
	var lastErr error
	for len(missing) > 0 {
		if err := ctx.Err(); err != nil {
			return recs, err
		}
		if err := routerExited(); err != nil {
			return recs, err
		}
		if time.Now().After(deadline) {
			return recs, missingError(missing, timeout, lastErr)
		}
		got, err := pollOnce(ctx, cl, 250*time.Millisecond)
		if err != nil {
			lastErr = err
		}
		for _, r := range got {
			id, _ := header(r, "id")
			delete(missing, id)
		}
		recs = append(recs, got...)
	}
	return append(recs, drain(ctx, cl, drainWindow)...), nil
}

// pollOnce waits at most d for one fetch and returns its records and its
// last error other than the timeout.
func pollOnce(ctx context.Context, cl *kgo.Client, d time.Duration) ([]*kgo.Record, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	fs := cl.PollFetches(ctx)
	var lastErr error
	fs.EachError(func(topic string, p int32, err error) {
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			lastErr = fmt.Errorf("fetching %s/%d: %w", topic, p, err)
		}
	})
	return fs.Records(), lastErr
}

// drain reads whatever arrives during d.
func drain(ctx context.Context, cl *kgo.Client, d time.Duration) []*kgo.Record {
	var recs []*kgo.Record
	end := time.Now().Add(d)
	for left := d; left > 0 && ctx.Err() == nil; left = time.Until(end) {
		got, _ := pollOnce(ctx, cl, left)
		recs = append(recs, got...)
	}
	return recs
}

func missingError(missing map[string]event, timeout time.Duration, lastErr error) error {
	var names []string
	for _, ev := range missing {
		names = append(names, ev.Type+"/"+ev.AggregateID)
	}
	sort.Strings(names)
	msg := fmt.Sprintf("%d of the committed events did not reach Kafka within %s: %s",
		len(missing), timeout, strings.Join(names, ", "))
	if lastErr != nil {
		msg += fmt.Sprintf(" (last consumer error: %v)", lastErr)
	}
	return errors.New(msg)
}

// tally checks what the consumer saw against what the app wrote: every
// committed event exactly once and no rolled-back one.
type tally struct {
	routed, rolledBack, duplicates, unknown int
}

func check(recs []*kgo.Record, w written) (tally, error) {
	committed := make(map[string]bool, len(w.committed))
	for _, ev := range w.committed {
		committed[ev.ID] = true
	}
	rolledBack := make(map[string]bool, len(w.rolledBack))
	for _, ev := range w.rolledBack {
		rolledBack[ev.ID] = true
	}
	var t tally
	seen := map[string]bool{}
	for _, r := range recs {
		id, _ := header(r, "id")
		switch {
		case rolledBack[id]:
			t.rolledBack++
		case !committed[id]:
			t.unknown++
		case seen[id]:
			t.duplicates++
		default:
			seen[id] = true
			t.routed++
		}
	}
	if t.routed != len(w.committed) || t.rolledBack+t.duplicates+t.unknown > 0 {
		return t, fmt.Errorf("consumer saw %d of %d committed events, %d rolled-back rows, %d duplicates, %d unknown records",
			t.routed, len(w.committed), t.rolledBack, t.duplicates, t.unknown)
	}
	return t, nil
}

// printRecords shows each record in the order the app wrote its event.
func printRecords(recs []*kgo.Record, w written) {
	order := make(map[string]int, len(w.committed))
	for i, ev := range w.committed {
		order[ev.ID] = i
	}
	rank := func(r *kgo.Record) int {
		id, _ := header(r, "id")
		if i, ok := order[id]; ok {
			return i
		}
		return len(order)
	}
	sorted := append([]*kgo.Record(nil), recs...)
	sort.SliceStable(sorted, func(i, j int) bool { return rank(sorted[i]) < rank(sorted[j]) })
	for _, r := range sorted {
		printRecord(r)
	}
}

// headerWidth is where header lines wrap.
const headerWidth = 100

func printRecord(r *kgo.Record) {
	out.printf("  %s  %s  key %s",
		out.paint(bold, r.Topic), out.paint(dim, fmt.Sprintf("partition %d  offset %d", r.Partition, r.Offset)),
		out.paint(cyan, string(r.Key)))
	const indent = "      "
	line := indent + "headers "
	for i, h := range r.Headers {
		kv := " " + h.Key + "=" + string(h.Value)
		if i > 0 && len(line)+len(kv) > headerWidth {
			out.printf("%s", line)
			line = indent + "        "
		}
		line += kv
	}
	out.printf("%s", line)
	value := "(null: tombstone)"
	if r.Value != nil {
		value = string(r.Value)
	}
	out.printf("%svalue    %s", indent, out.paint(green, value))
}

func header(r *kgo.Record, key string) (string, bool) {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value), true
		}
	}
	return "", false
}
