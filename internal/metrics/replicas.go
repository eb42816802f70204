package metrics

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ReplicaWatchConfig configures a ReplicaWatch. Zero values take the
// defaults.
type ReplicaWatchConfig struct {
	// Client is the watch's own Kafka client (kafka.NewClient); Run
	// closes it.
	Client *kgo.Client
	// Topics are watched besides those Metrics saw records routed to: the
	// checkpoint and dead-letter topics, and __transaction_state for
	// exactly-once. A topic that does not exist or may not be described is
	// left out.
	Topics []string
	// Every is the interval between looks. Default 5s.
	Every time.Duration
	// OnPartitions, if set, is told the partition count of each watched
	// topic (but Kafka's internal ones) at every look
	// (kafka.PartitionCounts.Observe).
	OnPartitions func(topic string, n int)
	// ConfigsEvery is how often min.insync.replicas is read again. Default
	// one minute.
	ConfigsEvery time.Duration
}

// ReplicaWatch looks at the partitions the router writes to and reports
// those that refuse acks=all writes: partitions without a leader, and
// partitions whose in-sync replicas are fewer than the topic's
// min.insync.replicas (the brokers answer NOT_ENOUGH_REPLICAS). The
// producer retries those answers without a word; the watch says why the
// router waits: a warning in the log when the set of such partitions
// changes and a line when they accept writes again,
// binlog_router_kafka_partitions_refusing_writes{reason}, and /readyz
// (Ready). It never changes what the relay does. It also tells each
// topic's partition count to OnPartitions.
type ReplicaWatch struct {
	m   *Metrics
	log zerolog.Logger
	cfg ReplicaWatchConfig

	minISR   map[string]int // topic -> min.insync.replicas; 0 when unknown
	configAt time.Time
	since    time.Time // when the current problems began

	mu       sync.Mutex
	problems []PartitionProblem
}

// PartitionProblem is one partition that refuses writes.
type PartitionProblem struct {
	Topic     string
	Partition int32
	Leader    int32
	Replicas  []int32
	ISR       []int32
	MinISR    int // 0 when unknown
}

// Reason is the metric label of the problem.
func (p PartitionProblem) Reason() string {
	if p.Leader < 0 {
		return "no_leader"
	}
	return "below_min_insync_replicas"
}

func (p PartitionProblem) String() string {
	if p.Leader < 0 {
		return fmt.Sprintf("%s/%d has no leader (replicas %v, in sync %v)", p.Topic, p.Partition, p.Replicas, p.ISR)
	}
	return fmt.Sprintf("%s/%d has %d in-sync replica(s) %v of %d, min.insync.replicas=%d (produce answers NOT_ENOUGH_REPLICAS)",
		p.Topic, p.Partition, len(p.ISR), p.ISR, len(p.Replicas), p.MinISR)
}

// NewReplicaWatch returns a watch reporting to m and log.
func NewReplicaWatch(m *Metrics, log zerolog.Logger, cfg ReplicaWatchConfig) *ReplicaWatch {
	if cfg.Every <= 0 {
		cfg.Every = 5 * time.Second
	}
	if cfg.ConfigsEvery <= 0 {
		cfg.ConfigsEvery = time.Minute
	}
	for _, reason := range []string{"no_leader", "below_min_insync_replicas"} {
		m.refusing.WithLabelValues(reason).Set(0)
	}
	return &ReplicaWatch{m: m, log: log.With().Str("component", "replicas").Logger(), cfg: cfg, minISR: map[string]int{}}
}

// Run looks every cfg.Every until ctx ends, then closes the client and
// returns nil. A look that fails (brokers unreachable) changes nothing.
func (w *ReplicaWatch) Run(ctx context.Context) error {
	cl := w.cfg.Client
	defer cl.Close()
	t := time.NewTicker(w.cfg.Every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil
		}
		lctx, cancel := context.WithTimeout(ctx, w.cfg.Every)
		problems, err := w.look(lctx, cl)
		cancel()
		if err != nil {
			w.log.Debug().Err(err).Msg("reading partition metadata")
			continue
		}
		w.update(problems, w.m.cfg.now())
	}
}

// Ready returns an error naming the partitions that refuse writes, nil
// when there are none.
func (w *ReplicaWatch) Ready() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.problems) == 0 {
		return nil
	}
	return fmt.Errorf("kafka refuses writes to %d partition(s) the router writes to: %s", len(w.problems), summary(w.problems, 3))
}

// Problems returns the partitions that refused writes at the last look.
func (w *ReplicaWatch) Problems() []PartitionProblem {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.problems)
}

// update records the problems of one look and logs a change.
func (w *ReplicaWatch) update(problems []PartitionProblem, now time.Time) {
	w.mu.Lock()
	before := w.problems
	w.problems = problems
	w.mu.Unlock()

	counts := map[string]int{"no_leader": 0, "below_min_insync_replicas": 0}
	for _, p := range problems {
		counts[p.Reason()]++
	}
	for reason, n := range counts {
		w.m.refusing.WithLabelValues(reason).Set(float64(n))
	}
	switch {
	case slices.EqualFunc(before, problems, samePartition):
	case len(problems) == 0:
		w.log.Info().Dur("after", now.Sub(w.since).Round(time.Millisecond)).
			Msg("kafka accepts writes again to every partition the router writes to")
	default:
		if len(before) == 0 {
			w.since = now
		}
		w.log.Warn().Strs("partitions", summaries(problems, 20)).
			Msg("kafka refuses writes to partitions the router writes to; the router waits (within --kafka-timeout and the transaction timeout) and resumes when they accept writes: bring the missing brokers back, or lower the topic's min.insync.replicas")
	}
}

func samePartition(a, b PartitionProblem) bool {
	return a.Topic == b.Topic && a.Partition == b.Partition && a.Reason() == b.Reason() && len(a.ISR) == len(b.ISR)
}

// look reads the metadata of the watched topics and judges their
// partitions.
func (w *ReplicaWatch) look(ctx context.Context, cl *kgo.Client) ([]PartitionProblem, error) {
	topics := w.topics()
	if len(topics) == 0 {
		return nil, nil
	}
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = false
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	if w.cfg.OnPartitions != nil {
		for _, t := range resp.Topics {
			if t.ErrorCode == 0 && t.Topic != nil && !strings.HasPrefix(*t.Topic, "__") && len(t.Partitions) > 0 {
				w.cfg.OnPartitions(*t.Topic, len(t.Partitions))
			}
		}
	}
	if now := w.m.cfg.now(); now.Sub(w.configAt) >= w.cfg.ConfigsEvery || w.unknownConfigs(resp) {
		w.readMinISR(ctx, cl, resp)
		w.configAt = now
	}
	return judgePartitions(resp, w.minISR), nil
}

// topics are the fixed topics and those records were routed to.
func (w *ReplicaWatch) topics() []string {
	set := map[string]bool{}
	for _, t := range w.cfg.Topics {
		if t != "" {
			set[t] = true
		}
	}
	w.m.routedMu.Lock()
	for t := range w.m.routedCache {
		set[t] = true
	}
	w.m.routedMu.Unlock()
	return slices.Sorted(func(yield func(string) bool) {
		for t := range set {
			if !yield(t) {
				return
			}
		}
	})
}

// unknownConfigs reports a described topic whose min.insync.replicas was
// never read.
func (w *ReplicaWatch) unknownConfigs(resp *kmsg.MetadataResponse) bool {
	for _, t := range resp.Topics {
		if t.ErrorCode == 0 && t.Topic != nil {
			if _, ok := w.minISR[*t.Topic]; !ok {
				return true
			}
		}
	}
	return false
}

// readMinISR reads min.insync.replicas of the described topics. A topic
// whose configuration may not be described keeps 0 (unknown): its
// partitions are then judged by their leader only.
func (w *ReplicaWatch) readMinISR(ctx context.Context, cl *kgo.Client, meta *kmsg.MetadataResponse) {
	req := kmsg.NewPtrDescribeConfigsRequest()
	for _, t := range meta.Topics {
		if t.ErrorCode != 0 || t.Topic == nil {
			continue
		}
		w.minISR[*t.Topic] = 0
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType = kmsg.ConfigResourceTypeTopic
		r.ResourceName = *t.Topic
		r.ConfigNames = []string{"min.insync.replicas"}
		req.Resources = append(req.Resources, r)
	}
	if len(req.Resources) == 0 {
		return
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		w.log.Debug().Err(err).Msg("reading min.insync.replicas")
		return
	}
	for _, r := range resp.Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			w.log.Debug().Err(err).Str("topic", r.ResourceName).Msg("reading min.insync.replicas")
			continue
		}
		for _, c := range r.Configs {
			if c.Name == "min.insync.replicas" && c.Value != nil {
				if n, err := strconv.Atoi(*c.Value); err == nil {
					w.minISR[r.ResourceName] = n
				}
			}
		}
	}
}

// judgePartitions returns the partitions of meta that refuse acks=all
// writes: no leader, or fewer in-sync replicas than minISR of their topic
// (0: unknown, not judged), counted as Kafka does up to the replication
// factor. Topics the response has an error for are left
// out.
func judgePartitions(meta *kmsg.MetadataResponse, minISR map[string]int) []PartitionProblem {
	var out []PartitionProblem
	for _, t := range meta.Topics {
		if t.ErrorCode != 0 || t.Topic == nil {
			continue
		}
		for _, p := range t.Partitions {
			// Kafka counts min.insync.replicas up to the replication factor.
			need := min(minISR[*t.Topic], len(p.Replicas))
			if p.Leader >= 0 && (need == 0 || len(p.ISR) >= need) {
				continue
			}
			out = append(out, PartitionProblem{Topic: *t.Topic, Partition: p.Partition, Leader: p.Leader,
				Replicas: slices.Clone(p.Replicas), ISR: slices.Clone(p.ISR), MinISR: need})
		}
	}
	slices.SortFunc(out, func(a, b PartitionProblem) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	return out
}

func summaries(ps []PartitionProblem, n int) []string {
	var out []string
	for i, p := range ps {
		if i == n {
			out = append(out, fmt.Sprintf("and %d more", len(ps)-n))
			break
		}
		out = append(out, p.String())
	}
	return out
}

func summary(ps []PartitionProblem, n int) string { return strings.Join(summaries(ps, n), "; ") }
