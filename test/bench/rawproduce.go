package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/pipeline"
	"github.com/binlog-router/binlog-router/internal/route"
)

// rawProduceResult is franz-go alone producing the backlog's records.
type rawProduceResult struct {
	Mode          string  `json:"mode"` // idempotent or transactional
	Records       int     `json:"records"`
	Bytes         int64   `json:"payload_bytes"`
	Seconds       float64 `json:"seconds"`
	RecordsPerSec float64 `json:"records_per_second"`
	CommitEvery   int     `json:"commit_every,omitempty"`
	CPU           cpuUse  `json:"cpu_during_run"`
}

// buildRecords makes n records shaped like the router's for a backlog of
// spec: same keys, payload sizes, topics per event type, and the headers
// id, event_type, aggregate_type and binlog_gtid.
func buildRecords(spec backlogSpec, prefix string, n int) ([]*kgo.Record, int64) {
	gen := newEventGen(spec.Seed, spec.Stream, spec.Aggregates, spec.PayloadBytes, spec.Jitter)
	recs := make([]*kgo.Record, n)
	var bytes int64
	var gtid []byte
	for i := range recs {
		if i%spec.RowsPerTxn == 0 {
			gtid = fmt.Appendf(nil, "0-1-%d", 1000+i/spec.RowsPerTxn)
		}
		e := gen.next()
		bytes += int64(len(e.Payload))
		recs[i] = &kgo.Record{
			Topic: prefix + "." + e.EventType,
			Key:   []byte(e.AggregateID),
			Value: e.Payload,
			Headers: []kgo.RecordHeader{
				{Key: route.HeaderID, Value: []byte(e.ID)},
				{Key: route.HeaderEventType, Value: []byte(e.EventType)},
				{Key: route.HeaderAggregateType, Value: []byte(e.AggregateType)},
				{Key: route.HeaderBinlogGTID, Value: gtid},
			},
			Timestamp: time.Now(),
		}
	}
	return recs, bytes
}

// producerOpts mirror the router's producer settings (internal/relay
// clientOpts with the default flags): its partitioner, buffer bounds,
// batch size, no linger and snappy compression (the router's default
// --compression; -router-args that change it do not change this).
func producerOpts(brokers []string) []kgo.Opt {
	return []kgo.Opt{
		kgo.SeedBrokers(brokers...), kgo.ClientID("bench-raw-produce"),
		kgo.RecordPartitioner(route.Partitioner()),
		kgo.MaxBufferedRecords(pipeline.DefaultMaxBufferedRecords),
		kgo.MaxBufferedBytes(pipeline.DefaultMaxBufferedBytes),
		kgo.ProducerBatchMaxBytes(int32(pipeline.DefaultMaxMessageBytes)),
		kgo.ProducerLinger(0),
		kgo.ProducerBatchCompression(kgo.SnappyCompression()),
	}
}

// rawProduce produces recs with an idempotent producer (acks=all), or,
// when txnID is set, a transactional one committing every commitEvery
// records (flush, then commit, as the router does).
func rawProduce(ctx context.Context, brokers []string, recs []*kgo.Record, bytes int64, txnID string, commitEvery int) (rawProduceResult, error) {
	res := rawProduceResult{Mode: "idempotent", Records: len(recs), Bytes: bytes}
	opts := producerOpts(brokers)
	if txnID != "" {
		res.Mode, res.CommitEvery = "transactional", commitEvery
		opts = append(opts, kgo.TransactionalID(txnID), kgo.TransactionTimeout(time.Minute))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return res, fmt.Errorf("raw produce client: %w", err)
	}
	defer cl.Close()
	if _, _, err := cl.ProducerID(ctx); err != nil {
		return res, fmt.Errorf("raw produce: initialising producer id: %w", err)
	}

	var (
		mu       sync.Mutex
		firstErr error
	)
	promise := func(_ *kgo.Record, err error) {
		if err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		}
	}
	began := time.Now()
	inTxn := false
	for i, r := range recs {
		if txnID != "" && !inTxn {
			if err := cl.BeginTransaction(); err != nil {
				return res, fmt.Errorf("raw produce: beginning transaction: %w", err)
			}
			inTxn = true
		}
		cl.Produce(ctx, r, promise)
		if txnID != "" && (i+1)%commitEvery == 0 {
			if err := commitRaw(ctx, cl); err != nil {
				return res, err
			}
			inTxn = false
		}
	}
	if inTxn {
		if err := commitRaw(ctx, cl); err != nil {
			return res, err
		}
	} else if err := cl.Flush(ctx); err != nil {
		return res, fmt.Errorf("raw produce: flushing: %w", err)
	}
	elapsed := time.Since(began)
	mu.Lock()
	defer mu.Unlock()
	if firstErr != nil {
		return res, fmt.Errorf("raw produce: %w", firstErr)
	}
	res.Seconds = elapsed.Seconds()
	res.RecordsPerSec = float64(len(recs)) / elapsed.Seconds()
	return res, nil
}

func commitRaw(ctx context.Context, cl *kgo.Client) error {
	if err := cl.Flush(ctx); err != nil {
		return fmt.Errorf("raw produce: flushing: %w", err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("raw produce: committing: %w", err)
	}
	return nil
}
