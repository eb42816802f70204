package kafka

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// repairAfter is how long Open lets the checkpoint partition settle by
// itself before it looks for a hanging transaction of its own to repair
// (repairHanging); SettleWait stays the bound of the whole wait.
const repairAfter = 5 * time.Second

// repairWithin bounds repairHanging's requests.
const repairWithin = 30 * time.Second

// txnOutcome is the decided outcome of a transactional id's last
// transaction, as DescribeTransactions reported it before the session's
// InitProducerId overwrote it.
type txnOutcome struct {
	TxnID      string
	ProducerID int64
	// Epoch is the coordinator's epoch of the id when described.
	Epoch int16
	// DataEpoch is the epoch of the transaction's records: Epoch under
	// transaction.version 0 and 1, one less under version 2 (its EndTxn
	// bumps the epoch).
	DataEpoch int16
	Committed bool // CompleteCommit; false is CompleteAbort
}

// matches reports whether a transaction open at producer id pid and
// epoch (its records' epoch, as DescribeProducers shows it) is the one
// whose outcome o is.
func (o txnOutcome) matches(pid int64, epoch int16) bool {
	return pid == o.ProducerID && epoch == o.DataEpoch
}

func (o txnOutcome) String() string {
	if o.Committed {
		return "commit"
	}
	return "abort"
}

// describeOutcomes returns, by producer id, the decided outcome of the
// last transaction of each of ids whose coordinator shows it completed
// (CompleteCommit or CompleteAbort), the cluster's finalized
// transaction.version telling the records' epoch. An id it cannot
// describe, or in any other state, is left out, and every id when the
// transaction.version cannot be read: their outcome is unknown. It is
// called before the session's InitProducerId, which replaces the state
// with Empty.
func describeOutcomes(ctx context.Context, cl *kgo.Client, ids []string, log zerolog.Logger) map[int64]txnOutcome {
	out := map[int64]txnOutcome{}
	tv, err := transactionVersion(ctx, cl)
	if err != nil {
		log.Debug().Err(err).Msg("reading the cluster's transaction.version: the outcome of the last transactions is unknown")
		return out
	}
	described, err := kadm.NewClient(cl).DescribeTransactions(ctx, ids...)
	if err != nil && len(described) == 0 {
		log.Debug().Err(err).Msg("describing the transactional ids: the outcome of their last transactions is unknown")
		return out
	}
	for _, d := range described {
		if d.Err != nil || d.ProducerID < 0 {
			continue
		}
		switch d.State {
		case "CompleteCommit", "CompleteAbort":
			o := txnOutcome{TxnID: d.TxnID, ProducerID: d.ProducerID, Epoch: d.ProducerEpoch, DataEpoch: d.ProducerEpoch, Committed: d.State == "CompleteCommit"}
			if tv >= 2 {
				o.DataEpoch--
			}
			if o.DataEpoch >= 0 {
				out[d.ProducerID] = o
			}
		}
	}
	return out
}

// transactionVersion is the cluster's finalized transaction.version
// feature level (0 when the cluster finalizes none), which franz-go
// follows: version 2 (KIP-890) bumps the epoch at every EndTxn.
func transactionVersion(ctx context.Context, cl *kgo.Client) (int16, error) {
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		return 0, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return 0, err
	}
	for _, f := range resp.FinalizedFeatures {
		if f.Name == "transaction.version" {
			return f.MaxVersionLevel, nil
		}
	}
	return 0, nil
}

// keepUnchanged drops from outcomes every producer id whose epoch after
// the session's InitProducerId (inited: the producer id and epoch each
// producer got) is not the described epoch plus one: another transaction
// of the id ran between the describe and the initialisation (a producer
// of an older session still alive), or the producer id changed, and the
// outcome described is no longer the last one.
func keepUnchanged(outcomes map[int64]txnOutcome, inited map[int64]int16) {
	for pid, o := range outcomes {
		if e, ok := inited[pid]; !ok || int32(e) != int32(o.Epoch)+1 {
			delete(outcomes, pid)
		}
	}
}

// repairTarget is one producer's hanging transaction to end.
type repairTarget struct {
	Outcome txnOutcome
	Epoch   int16 // the records' epoch, as DescribeProducers shows it
}

// repairable decides which transactions open on the checkpoint partition
// (open, as DescribeProducers shows them) the session may end itself:
// every one must be of one of the session's producer ids with a known
// outcome at a matching epoch (txnOutcome.matches); if any is not, none
// is (nil), and the session waits as before. A transaction of another
// producer (another router sharing the topic) ends on its own.
func repairable(open []kadm.DescribedProducer, outcomes map[int64]txnOutcome) []repairTarget {
	var ts []repairTarget
	for _, p := range open {
		if p.CurrentTxnStartOffset < 0 {
			continue
		}
		o, ok := outcomes[p.ProducerID]
		if !ok || !o.matches(p.ProducerID, p.ProducerEpoch) {
			return nil
		}
		ts = append(ts, repairTarget{Outcome: o, Epoch: p.ProducerEpoch})
	}
	return ts
}

// repairHanging ends the hanging transactions of the session's own
// producer ids that hold the checkpoint partition, when their outcome is
// known; it reports whether it wrote any marker.
//
// A hanging transaction is Apache Kafka 4.3 and later's KAFKA-20734
// (docs/kafka-issues.md): a transaction committed or aborted while one of
// its partitions had no leader is completed by the coordinator without
// that partition's marker, and stays open there for good. Its outcome is
// known when DescribeTransactions, before the session's InitProducerId
// (outcomes), showed the id CompleteCommit or CompleteAbort at the
// transaction's epoch (describeOutcomes), and InitProducerId then
// returned the next epoch (keepUnchanged). The coordinator has then
// decided and writes nothing more for that epoch; the marker of the
// decided outcome, written to every partition where the transaction is open (found with
// DescribeProducers over the checkpoint partition and every partition of
// the topics matching topics, every topic when nil), completes exactly
// what Kafka decided, so read_committed consumers read the transaction's
// records and checkpoint together or not at all. The markers are what
// `kafka-transactions.sh abort` writes (WriteTxnMarkers to the
// partition's leader with the producer id and epoch DescribeProducers
// shows, and its coordinator epoch, 0 when absent), with the decided
// outcome. Each transaction whose markers it wrote somewhere is reported
// to onRepaired, when not nil.
//
// It does nothing when the outcome is unknown, or any transaction open
// on the checkpoint partition is not one of the session's with a known
// outcome: Settle then ends as before. Failures are logged; Settle after
// it says whether the partition settled.
func repairHanging(ctx context.Context, cl *kgo.Client, checkpointTopic string, topics *regexp.Regexp, outcomes map[int64]txnOutcome, onRepaired func(committed bool), log zerolog.Logger) bool {
	if len(outcomes) == 0 {
		return false
	}
	adm := kadm.NewClient(cl)
	cps, err := adm.DescribeProducers(ctx, kadm.TopicsSet{checkpointTopic: {0: {}}})
	if err != nil {
		log.Debug().Err(err).Msg("describing the producers of the checkpoint partition")
		return false
	}
	var open []kadm.DescribedProducer
	cps.EachProducer(func(p kadm.DescribedProducer) {
		if p.CurrentTxnStartOffset >= 0 {
			open = append(open, p)
		}
	})
	targets := repairable(open, outcomes)
	if len(targets) == 0 {
		return false
	}
	set := kadm.TopicsSet{checkpointTopic: {0: {}}}
	listed, err := adm.ListTopics(ctx)
	if err != nil {
		log.Warn().Err(err).Msg("listing topics to repair a hanging transaction; the router keeps waiting for it")
		return false
	}
	for _, t := range listed {
		if t.Err != nil || topics != nil && !topics.MatchString(t.Topic) {
			continue
		}
		for p := range t.Partitions {
			set.Add(t.Topic, p)
		}
	}
	all, err := adm.DescribeProducers(ctx, set)
	if err != nil {
		log.Warn().Err(err).Msg("describing the producers of the outbox topics to repair a hanging transaction; the router keeps waiting for it")
		return false
	}
	var undescribed []string
	all.EachPartition(func(p kadm.DescribedProducersPartition) {
		if p.Err != nil {
			undescribed = append(undescribed, fmt.Sprintf("%s/%d: %v", p.Topic, p.Partition, p.Err))
		}
	})
	if len(undescribed) > 0 {
		sort.Strings(undescribed)
		log.Warn().Strs("partitions", undescribed).Msg("some partitions could not be described; a hanging transaction is repaired only where it was found")
	}
	wrote := false
	for _, tg := range targets {
		var found []kadm.DescribedProducer
		all.EachProducer(func(p kadm.DescribedProducer) {
			if p.ProducerID == tg.Outcome.ProducerID && p.ProducerEpoch == tg.Epoch && p.CurrentTxnStartOffset >= 0 {
				found = append(found, p)
			}
		})
		repaired, failed := writeMarkers(ctx, cl, found, tg.Outcome.Committed)
		ev := log.Warn()
		if len(failed) > 0 {
			ev = log.Error().Strs("failed_partitions", failed)
		}
		ev.Str("kafka_issue", "KAFKA-20734").Str("transactional_id", tg.Outcome.TxnID).Int64("producer_id", tg.Outcome.ProducerID).
			Int16("producer_epoch", tg.Epoch).Str("outcome", tg.Outcome.String()).Strs("partitions", repaired).
			Msg("a transaction of the router's was completed by the coordinator without its markers (KAFKA-20734, docs/kafka-issues.md); wrote its decided markers")
		if len(repaired) > 0 {
			wrote = true
			if onRepaired != nil {
				onRepaired(tg.Outcome.Committed)
			}
		}
	}
	return wrote
}

// writeMarkers writes the marker (committed or not) of each open
// transaction in open to its partition's leader; it returns the
// partitions written and the ones that failed ("topic/partition: error").
func writeMarkers(ctx context.Context, cl *kgo.Client, open []kadm.DescribedProducer, committed bool) (repaired, failed []string) {
	byLeader := map[int32][]kadm.DescribedProducer{}
	for _, p := range open {
		byLeader[p.Leader] = append(byLeader[p.Leader], p)
	}
	for leader, ps := range byLeader {
		req := kmsg.NewPtrWriteTxnMarkersRequest()
		for _, p := range ps {
			m := kmsg.NewWriteTxnMarkersRequestMarker()
			m.ProducerID, m.ProducerEpoch, m.Committed = p.ProducerID, p.ProducerEpoch, committed
			m.CoordinatorEpoch = max(p.CoordinatorEpoch, 0) // as kafka-transactions.sh: an absent coordinator epoch is 0
			mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
			mt.Topic, mt.Partitions = p.Topic, []int32{p.Partition}
			m.Topics = append(m.Topics, mt)
			req.Markers = append(req.Markers, m)
		}
		resp, err := req.RequestWith(ctx, cl.Broker(int(leader)))
		if err != nil {
			for _, p := range ps {
				failed = append(failed, fmt.Sprintf("%s/%d: %v", p.Topic, p.Partition, err))
			}
			continue
		}
		for _, m := range resp.Markers {
			for _, t := range m.Topics {
				for _, p := range t.Partitions {
					if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
						failed = append(failed, fmt.Sprintf("%s/%d: %v", t.Topic, p.Partition, err))
						continue
					}
					repaired = append(repaired, fmt.Sprintf("%s/%d", t.Topic, p.Partition))
				}
			}
		}
	}
	sort.Strings(repaired)
	sort.Strings(failed)
	return repaired, failed
}

// joinOutcomes names outcomes for a debug log.
func joinOutcomes(outcomes map[int64]txnOutcome) string {
	var s []string
	for _, o := range outcomes {
		s = append(s, fmt.Sprintf("%s: producer id %d epoch %d %s", o.TxnID, o.ProducerID, o.Epoch, o))
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}
