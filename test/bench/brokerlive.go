package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/route"
)

// brokerMode is one way of producing in the broker-alone live stage.
type brokerMode struct {
	Label string `json:"label"`
	// IDs is the number of transactional ids used in turn; 0 is an
	// idempotent producer (acks=all) producing each record when due.
	IDs int `json:"transactional_ids"`
	// DBLoad: the database carries the live stage's load meanwhile (see
	// startDBLoad), so the machine is as busy as under the router.
	DBLoad bool `json:"database_loaded"`
}

// brokerModes are the producers the broker-alone stage measures: what
// the router's at-least-once mode and its exactly-once mode with one and
// with two transactional ids cost with nothing but franz-go in between,
// first on an otherwise idle machine, then while the database takes the
// same inserts and a dump connection reads their binlog.
var brokerModes = []brokerMode{
	{Label: "idempotent", IDs: 0},
	{Label: "transactional, 1 id", IDs: 1},
	{Label: "transactional, 2 ids in turn", IDs: 2},
	{Label: "idempotent, database loaded", IDs: 0, DBLoad: true},
	{Label: "transactional, 1 id, database loaded", IDs: 1, DBLoad: true},
	{Label: "transactional, 2 ids in turn, database loaded", IDs: 2, DBLoad: true},
}

// brokerRate is one rate of one mode of the broker-alone stage.
type brokerRate struct {
	Mode         brokerMode   `json:"mode"`
	TargetRate   int          `json:"target_rate"`
	Produced     int          `json:"produced"`
	Received     int          `json:"received"`
	Transactions int          `json:"transactions"`
	Latency      distribution `json:"latency"` // consumer receive - due time
	CPU          cpuUse       `json:"cpu_during_run"`
}

// runBrokerLive measures the broker alone at each live rate: a bare
// franz-go producer, configured as the router's (no linger, the
// router's partitioner, metadata refreshed after 100 ms), produces one
// record at each due time of the open-loop schedule to its event type's
// topic, as the router would, and the live stage's read_committed
// consumer receives it. Transactional modes commit as the router does
// when the source is idle: one transaction holds every record that came
// due while the one before was committed, and a checkpoint-sized record
// in a one-partition topic. The database takes no part in what is
// measured; the figures are the floor under the router's.
func runBrokerLive(ctx context.Context, e *env, o *options) ([]brokerRate, error) {
	var out []brokerRate
	gen := newEventGen(o.Seed, 2000, o.Aggregates, o.PayloadBytes, 0.1)
	for _, m := range brokerModes {
		prefix := e.unique("bench-broker")
		topics := make([]string, len(eventTypes))
		for i, t := range eventTypes {
			topics[i] = prefix + "." + t.Name
		}
		if err := e.admin.createTopics(ctx, o.Partitions, topics...); err != nil {
			return out, err
		}
		checkpoint := prefix + "-checkpoint"
		if err := e.admin.createTopics(ctx, 1, checkpoint); err != nil {
			return out, err
		}
		cons, err := startLiveConsumer(ctx, e.kafka.Brokers, topics)
		if err != nil {
			return out, err
		}
		if o.LiveWarmup > 0 {
			warm := *o
			warm.LiveDuration = o.LiveWarmup
			if _, err := brokerRun(ctx, e, &warm, gen, cons, prefix, m, o.LiveRates[0]); err != nil {
				cons.Stop()
				return out, fmt.Errorf("broker alone, %s, warm-up: %w", m.Label, err)
			}
		}
		for _, rate := range o.LiveRates {
			e.settle(ctx, o.Settle)
			r, err := brokerRun(ctx, e, o, gen, cons, prefix, m, rate)
			if err != nil {
				cons.Stop()
				return out, fmt.Errorf("broker alone, %s at %d/s: %w", m.Label, rate, err)
			}
			e.log.Info().Str("mode", m.Label).Int("rate", rate).Float64("p50_ms", r.Latency.P50Ms).
				Float64("p99_ms", r.Latency.P99Ms).Int("transactions", r.Transactions).Msg("broker alone: rate done")
			out = append(out, r)
		}
		cons.Stop()
		if err := e.admin.deleteTopics(context.WithoutCancel(ctx), append(topics, checkpoint)...); err != nil {
			e.log.Warn().Err(err).Msg("dropping the broker-alone topics")
		}
	}
	return out, nil
}

// brokerRun produces on the schedule of rate for o.LiveDuration in mode m
// to the topics named prefix.<event type> (and prefix-checkpoint) and
// waits for the consumer to receive every record.
func brokerRun(ctx context.Context, e *env, o *options, gen *eventGen, cons *liveConsumer, prefix string, m brokerMode, rate int) (brokerRate, error) {
	res := brokerRate{Mode: m, TargetRate: rate}
	run := e.unique("bench-broker-txn")
	cls := make([]*kgo.Client, max(m.IDs, 1))
	for i := range cls {
		opts := []kgo.Opt{kgo.SeedBrokers(e.kafka.Brokers...), kgo.ProducerLinger(0),
			kgo.RecordPartitioner(route.Partitioner()), kgo.MetadataMinAge(100 * time.Millisecond)}
		if m.IDs > 0 {
			opts = append(opts, kgo.TransactionalID(fmt.Sprintf("%s-%d", run, i)), kgo.TransactionTimeout(time.Minute))
		}
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			return res, err
		}
		defer cl.Close()
		cls[i] = cl
		if err := cl.Ping(ctx); err != nil {
			return res, err
		}
	}
	total := int(float64(rate) * o.LiveDuration.Seconds())
	recs := make([]*kgo.Record, total)
	for k := range recs {
		ev := gen.next()
		recs[k] = &kgo.Record{Topic: prefix + "." + ev.EventType, Key: []byte(ev.AggregateID), Value: ev.Payload,
			Headers: []kgo.RecordHeader{{Key: route.HeaderID, Value: []byte(ev.ID)}}}
	}
	var load *dbLoad
	if m.DBLoad {
		var err error
		if load, err = startDBLoad(ctx, e, o, rate); err != nil {
			return res, err
		}
		defer load.Stop()
	}
	before := cons.Count()
	meter := newCPUMeter(e.serverPids())
	interval := time.Second / time.Duration(rate)
	start := time.Now().Add(20 * time.Millisecond)
	due := func(k int) time.Time { return start.Add(time.Duration(k) * interval) }

	var produceErr error
	var errOnce sync.Once
	fail := func(err error) {
		if err != nil {
			errOnce.Do(func() { produceErr = err })
		}
	}
	queue := make(chan *kgo.Record, total)
	var wg sync.WaitGroup
	if m.IDs > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res.Transactions = commitInTurn(ctx, cls, queue, prefix+"-checkpoint", fail)
		}()
	}
	for k := 0; k < total && ctx.Err() == nil; {
		for k < total && !due(k).After(time.Now()) {
			if m.IDs == 0 {
				cls[0].Produce(ctx, recs[k], func(_ *kgo.Record, err error) { fail(err) })
			} else {
				queue <- recs[k]
			}
			k++
		}
		if k < total {
			time.Sleep(time.Until(due(k)))
		}
	}
	close(queue)
	wg.Wait()
	fail(cls[0].Flush(ctx))
	if produceErr != nil {
		return res, produceErr
	}
	if load != nil {
		if err := load.Stop(); err != nil {
			return res, err
		}
	}
	res.CPU = meter.used(0)
	res.Produced = total
	cons.waitCount(ctx, before+total, liveGrace)
	var lat []time.Duration
	for k, r := range recs {
		for _, h := range r.Headers {
			if at, ok := cons.ReceivedAt(string(h.Value)); ok {
				lat = append(lat, at.Sub(due(k)))
			}
		}
	}
	res.Received = len(lat)
	res.Latency = summarise(lat)
	return res, nil
}

// checkpointValue is the size of a checkpoint record: a GTID set and
// its time, as the router writes.
var checkpointValue = make([]byte, 200)

// commitInTurn runs transactions over the clients in turn until queue is
// closed: each holds every record waiting when it begins and a record in
// the checkpoint topic, and commits as soon as they are acknowledged. It
// returns the number committed.
func commitInTurn(ctx context.Context, cls []*kgo.Client, queue <-chan *kgo.Record, checkpoint string, fail func(error)) int {
	n := 0
	for rec := range queue {
		cl := cls[n%len(cls)]
		if err := cl.BeginTransaction(); err != nil {
			fail(err)
			return n
		}
		cl.Produce(ctx, rec, func(_ *kgo.Record, err error) { fail(err) })
	more:
		for {
			select {
			case r, ok := <-queue:
				if !ok {
					break more
				}
				cl.Produce(ctx, r, func(_ *kgo.Record, err error) { fail(err) })
			default:
				break more
			}
		}
		cl.Produce(ctx, &kgo.Record{Topic: checkpoint, Key: []byte("bench"), Value: checkpointValue}, func(_ *kgo.Record, err error) { fail(err) })
		if err := cl.Flush(ctx); err != nil {
			fail(err)
			return n
		}
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			fail(err)
			return n
		}
		n++
	}
	return n
}
