package main

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/binlog-router/binlog-router/internal/pipeline"
)

// options are the sizes and switches of one benchmark run. Every size has
// a flag; -quick divides the sizes that were not set explicitly by about 10.
type options struct {
	Events       int           // outbox rows of the catch-up backlog
	RowsPerTxn   int           // outbox rows per backlog transaction
	PayloadBytes int           // mean JSON payload size (sizes vary by +-10%)
	Aggregates   int           // distinct aggregate ids (Zipf distributed)
	OtherTxnPct  float64       // share of backlog transactions that write another table, in percent
	Loaders      int           // parallel loader connections
	TxnsPerExec  int           // backlog transactions sent in one round trip (multi-statement)
	CommitEvery  int           // raw transactional produce: records per Kafka transaction (the router's --commit-records default)
	LiveRates    []int         // open-loop insert rates, events/s
	LiveDuration time.Duration // how long each rate runs
	LiveWarmup   time.Duration // unmeasured load at the first rate before the live and broker stages
	LiveConns    int           // connections of the open-loop load generator (16 carry 10k/s at ~1 ms an INSERT; 64 made mariadbd thrash on 2 cores)
	BigRows      int           // rows of the 1 MB payload backlog
	BigPayload   int           // payload size of that backlog, bytes
	BigTxnRows   int           // outbox rows in the single large transaction
	Partitions   int           // partitions of every topic
	Seed         uint64        // workload random seed
	Stages       stageSet      // which stages run
	Timeout      time.Duration // bound on any single wait (catch-up, verification)
	Settle       time.Duration // longest wait for a quiet machine before each measurement
	OutDir       string        // where results/<timestamp>.json and latest.json go
	ProfileDir   string        // when set, CPU profiles of raw decode, raw produce and an in-process router
	RouterEnv    []string      // extra environment of the router process (e.g. GOGC=200)
	RouterArgs   []string      // extra flags of every router run (e.g. --kafka-timeout=24h)
	Runs         int           // repetitions of the raw limits and the catch-ups (best is reported)
	Kafka        string        // the broker: kfake (default, its own process) or apache (a private Apache Kafka node)
	KafkaProps   []string      // extra KEY=VALUE server properties of every Apache Kafka node
	KafkaDir     string        // directory the Apache Kafka nodes' data goes in; "" is the system's temporary directory
	Quick        bool
}

func defaultOptions() options {
	return options{
		Events:       500000,
		RowsPerTxn:   10,
		PayloadBytes: 500,
		Aggregates:   10000,
		OtherTxnPct:  20,
		Loaders:      4,
		TxnsPerExec:  20,
		CommitEvery:  pipeline.DefaultCommitRecords,
		LiveRates:    []int{1000, 10000},
		LiveDuration: 20 * time.Second,
		LiveWarmup:   5 * time.Second,
		LiveConns:    16,
		BigRows:      300,
		BigPayload:   1 << 20,
		BigTxnRows:   100000,
		Partitions:   3,
		Seed:         1,
		Stages:       allStages(),
		Timeout:      10 * time.Minute,
		Settle:       30 * time.Second,
		OutDir:       "bench-results",
		Runs:         3,
		Kafka:        kafkaKfake,
	}
}

// register binds the flags of fs to o.
func (o *options) register(fs *flag.FlagSet) {
	fs.IntVar(&o.Events, "events", o.Events, "outbox rows in the catch-up backlog")
	fs.IntVar(&o.RowsPerTxn, "rows-per-txn", o.RowsPerTxn, "outbox rows per backlog transaction")
	fs.IntVar(&o.PayloadBytes, "payload-bytes", o.PayloadBytes, "mean JSON payload size in bytes")
	fs.IntVar(&o.Aggregates, "aggregates", o.Aggregates, "distinct aggregate ids (Zipf skew)")
	fs.Float64Var(&o.OtherTxnPct, "other-txn-pct", o.OtherTxnPct, "percent of backlog transactions that write a non-outbox table")
	fs.IntVar(&o.Loaders, "loaders", o.Loaders, "parallel loader connections")
	fs.IntVar(&o.TxnsPerExec, "txns-per-exec", o.TxnsPerExec, "backlog transactions per round trip")
	fs.IntVar(&o.CommitEvery, "commit-every", o.CommitEvery, "raw transactional produce: records per Kafka transaction")
	fs.Var((*intList)(&o.LiveRates), "live-rates", "open-loop insert rates in events/s, comma separated")
	fs.DurationVar(&o.LiveDuration, "live-duration", o.LiveDuration, "duration of each live rate")
	fs.DurationVar(&o.LiveWarmup, "live-warmup", o.LiveWarmup, "unmeasured load at the first live rate before measuring (warms the broker's JIT)")
	fs.IntVar(&o.LiveConns, "live-conns", o.LiveConns, "connections of the live load generator")
	fs.IntVar(&o.BigRows, "big-rows", o.BigRows, "rows of the large-payload backlog")
	fs.IntVar(&o.BigPayload, "big-payload-bytes", o.BigPayload, "payload size of the large-payload backlog")
	fs.IntVar(&o.BigTxnRows, "big-txn-rows", o.BigTxnRows, "outbox rows in the single large transaction")
	fs.IntVar(&o.Partitions, "partitions", o.Partitions, "partitions per topic")
	fs.Uint64Var(&o.Seed, "seed", o.Seed, "workload random seed")
	fs.Var(&o.Stages, "stages", "stages to run, comma separated: "+strings.Join(stageNames, ","))
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "bound on any single catch-up or verification")
	fs.DurationVar(&o.Settle, "settle", o.Settle, "longest wait for a quiet machine before each measurement")
	fs.StringVar(&o.OutDir, "out", o.OutDir, "directory for <timestamp>.json and latest.json")
	fs.StringVar(&o.ProfileDir, "profile", o.ProfileDir, "write CPU profiles (raw decode, raw produce, in-process router) to this directory")
	fs.Var((*stringList)(&o.RouterEnv), "router-env", "extra KEY=VALUE environment of the router process, comma separated")
	fs.IntVar(&o.Runs, "runs", o.Runs, "repetitions of the raw limits and the catch-ups; the fastest run is reported, the median beside it")
	fs.Var((*stringList)(&o.RouterArgs), "router-args", "extra flags of every router run, comma separated (e.g. --kafka-timeout=24h)")
	fs.StringVar(&o.Kafka, "kafka", o.Kafka, "the broker: kfake, or apache for a private Apache Kafka node (needs java and mvn; the jars are fetched once, see make kafka-jars)")
	fs.StringVar(&o.KafkaDir, "kafka-dir", o.KafkaDir, "directory the Apache Kafka nodes' data goes in (default: the system's temporary directory; a tmpfs such as /dev/shm takes the disk's page-fault costs out of the broker's CPU, see BENCHMARKS.md)")
	fs.Var((*stringList)(&o.KafkaProps), "kafka-props", "extra KEY=VALUE server properties of the Apache Kafka nodes (-kafka=apache and the debezium stage), comma separated (e.g. add.partitions.to.txn.retry.backoff.ms=2)")
	fs.BoolVar(&o.Quick, "quick", o.Quick, "shrink every size about 10x (sizes set explicitly are kept)")
}

// applyQuick shrinks the sizes not named in set.
func (o *options) applyQuick(set map[string]bool) {
	if !o.Quick {
		return
	}
	shrink := func(name string, v *int, floor int) {
		if !set[name] {
			*v = max(*v/10, floor)
		}
	}
	shrink("events", &o.Events, 1000)
	shrink("big-rows", &o.BigRows, 10)
	shrink("big-txn-rows", &o.BigTxnRows, 1000)
	if !set["live-duration"] {
		o.LiveDuration = max(o.LiveDuration/10, time.Second)
	}
}

func (o *options) validate() error {
	var errs []error
	positive := func(name string, v int) {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("-%s must be positive, got %d", name, v))
		}
	}
	positive("events", o.Events)
	positive("rows-per-txn", o.RowsPerTxn)
	positive("payload-bytes", o.PayloadBytes)
	positive("aggregates", o.Aggregates)
	positive("loaders", o.Loaders)
	positive("txns-per-exec", o.TxnsPerExec)
	positive("commit-every", o.CommitEvery)
	positive("live-conns", o.LiveConns)
	positive("big-rows", o.BigRows)
	positive("big-payload-bytes", o.BigPayload)
	positive("big-txn-rows", o.BigTxnRows)
	positive("partitions", o.Partitions)
	positive("runs", o.Runs)
	if o.Kafka != kafkaKfake && o.Kafka != kafkaApache {
		errs = append(errs, fmt.Errorf("-kafka %q: want kfake or apache", o.Kafka))
	}
	if o.OtherTxnPct < 0 || o.OtherTxnPct >= 100 {
		errs = append(errs, fmt.Errorf("-other-txn-pct must be in [0, 100), got %g", o.OtherTxnPct))
	}
	if o.Events < o.RowsPerTxn {
		errs = append(errs, fmt.Errorf("-events %d is smaller than -rows-per-txn %d", o.Events, o.RowsPerTxn))
	}
	for _, r := range o.LiveRates {
		positive("live-rates", r)
	}
	if o.LiveDuration <= 0 {
		errs = append(errs, errors.New("-live-duration must be positive"))
	}
	for _, kv := range o.RouterEnv {
		if !strings.Contains(kv, "=") {
			errs = append(errs, fmt.Errorf("-router-env %q: want KEY=VALUE", kv))
		}
	}
	for _, kv := range o.KafkaProps {
		if !strings.Contains(kv, "=") {
			errs = append(errs, fmt.Errorf("-kafka-props %q: want KEY=VALUE", kv))
		}
	}
	return errors.Join(errs...)
}

// intList is a comma separated list of positive integers.
type intList []int

func (l *intList) String() string {
	parts := make([]string, len(*l))
	for i, v := range *l {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, ",")
}

func (l *intList) Set(s string) error {
	var out []int
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		v, err := strconv.Atoi(p)
		if err != nil {
			return fmt.Errorf("%q is not an integer", p)
		}
		out = append(out, v)
	}
	*l = out
	return nil
}

// stringList is a comma separated list.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(s string) error {
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}
