package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// backlogReport is the catch-up backlog as loaded.
type backlogReport struct {
	Rows             int     `json:"rows"`
	OutboxTxns       int     `json:"outbox_transactions"`
	OtherTxns        int     `json:"other_transactions"`
	PayloadBytes     int64   `json:"payload_bytes"`
	StartGTID        string  `json:"start_gtid"`
	EndGTID          string  `json:"end_gtid"`
	LoadSeconds      float64 `json:"load_seconds"`
	LoadRowsPerSec   float64 `json:"load_rows_per_second"`
	MeanPayloadBytes float64 `json:"mean_payload_bytes"`
}

func newBacklogReport(bl backlog) *backlogReport {
	return &backlogReport{
		Rows: bl.Rows, OutboxTxns: bl.OutboxTxns, OtherTxns: bl.OtherTxns, PayloadBytes: bl.PayloadBytes,
		StartGTID: bl.Start.String(), EndGTID: bl.End.String(),
		LoadSeconds: bl.Elapsed.Seconds(), LoadRowsPerSec: float64(bl.Rows) / bl.Elapsed.Seconds(),
		MeanPayloadBytes: float64(bl.PayloadBytes) / float64(bl.Rows),
	}
}

// results is everything one run measured; it is written as JSON and
// printed as a table.
type results struct {
	Time    time.Time      `json:"time"`
	Quick   bool           `json:"quick"`
	Options options        `json:"options"`
	Machine machine        `json:"machine"`
	Backlog *backlogReport `json:"backlog,omitempty"`
	// The best (fastest) of Options.Runs runs of each measurement; every
	// run is in the *Runs lists and summarised in Spread.
	RawRead          *rawReadResult    `json:"raw_read,omitempty"`
	RawDecode        *rawDecodeResult  `json:"raw_decode,omitempty"`
	RawIdempotent    *rawProduceResult `json:"raw_produce_idempotent,omitempty"`
	RawTransactional *rawProduceResult `json:"raw_produce_transactional,omitempty"`
	ExactlyOnce      *catchupResult    `json:"router_exactly_once,omitempty"`
	AtLeastOnce      *catchupResult    `json:"router_at_least_once,omitempty"`
	Spread           map[string]spread `json:"spread,omitempty"`

	RawReadRuns          []rawReadResult    `json:"raw_read_runs,omitempty"`
	RawDecodeRuns        []rawDecodeResult  `json:"raw_decode_runs,omitempty"`
	RawIdempotentRuns    []rawProduceResult `json:"raw_produce_idempotent_runs,omitempty"`
	RawTransactionalRuns []rawProduceResult `json:"raw_produce_transactional_runs,omitempty"`
	ExactlyOnceRuns      []catchupResult    `json:"router_exactly_once_runs,omitempty"`
	AtLeastOnceRuns      []catchupResult    `json:"router_at_least_once_runs,omitempty"`
	Live                 *liveStage         `json:"live,omitempty"`
	LiveAtLeastOnce      *liveStage         `json:"live_at_least_once,omitempty"`
	Broker               []brokerRate       `json:"broker_alone,omitempty"`
	Stress               []catchupResult    `json:"stress,omitempty"`
	Debezium             *dbzStage          `json:"debezium,omitempty"`
	Targets              []target           `json:"targets"`
	Errors               []string           `json:"errors,omitempty"` // stages that failed
	Error                string             `json:"error,omitempty"`  // why the run stopped early, if it did
}

// readResults loads a results file written by writeJSON.
func readResults(path string) (*results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading results: %w", err)
	}
	var r results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decoding results %s: %w", path, err)
	}
	if r.Live != nil && r.Live.Delivery == "" {
		r.Live.Delivery = "exactly-once" // files written before the at-least-once live stage
	}
	r.pickBest()
	r.evaluate()
	return &r, nil
}

// writeJSON writes r to dir/<timestamp>.json and dir/latest.json.
func (r *results) writeJSON(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encoding results: %w", err)
	}
	b = append(b, '\n')
	path := filepath.Join(dir, r.Time.UTC().Format("20060102T150405Z")+".json")
	for _, p := range []string{path, filepath.Join(dir, "latest.json")} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return "", fmt.Errorf("writing results: %w", err)
		}
	}
	return path, nil
}
