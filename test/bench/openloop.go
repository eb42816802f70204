package main

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// insertSample is one single-row transaction of the open-loop generator.
type insertSample struct {
	ID      string
	Due     time.Time // start + k/rate
	Started time.Time
	Done    time.Time // the autocommit INSERT (its COMMIT) returned
	Err     error
}

// openLoopResult is what the generator did in its window.
type openLoopResult struct {
	Window    time.Duration
	Scheduled int
	Missed    int // due inside the window but not started before it ended
	Samples   []insertSample
}

// openLoop inserts single-row outbox transactions on a fixed schedule: the
// k-th is due at start + k/rate whatever happened to earlier ones, and a
// pool of conns connections picks up due work. Statements are built
// before the window opens so that building them costs no time inside it.
func openLoop(ctx context.Context, db *sql.DB, rate int, window time.Duration, conns int, gen *eventGen) openLoopResult {
	total := int(float64(rate) * window.Seconds())
	res := openLoopResult{Window: window, Scheduled: total}
	type job struct {
		k    int
		id   string
		stmt string
	}
	jobs := make([]job, total)
	one := make([]outboxEvent, 1)
	for k := range jobs {
		one[0] = gen.next()
		jobs[k] = job{k: k, id: one[0].ID, stmt: string(appendOutboxInsert(nil, one))}
	}
	interval := time.Second / time.Duration(rate)
	start := time.Now().Add(20 * time.Millisecond)
	end := start.Add(window)

	queue := make(chan *job, total)
	samples := make([][]insertSample, conns)
	missed := make([]int, conns)
	var wg sync.WaitGroup
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range queue {
				now := time.Now()
				if now.After(end) || ctx.Err() != nil {
					missed[w]++
					continue
				}
				_, err := db.ExecContext(ctx, j.stmt)
				samples[w] = append(samples[w], insertSample{ID: j.id, Due: start.Add(time.Duration(j.k) * interval),
					Started: now, Done: time.Now(), Err: err})
			}
		}()
	}
	// Dispatch every due job; sleep until the next one is due.
	for k := 0; k < total && ctx.Err() == nil; {
		now := time.Now()
		for k < total && !start.Add(time.Duration(k)*interval).After(now) {
			queue <- &jobs[k]
			k++
		}
		if k < total {
			time.Sleep(time.Until(start.Add(time.Duration(k) * interval)))
		}
	}
	close(queue)
	wg.Wait()
	for w := range conns {
		res.Samples = append(res.Samples, samples[w]...)
		res.Missed += missed[w]
	}
	return res
}
