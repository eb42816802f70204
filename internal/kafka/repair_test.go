package kafka

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/twmb/franz-go/pkg/kadm"
)

// TestRepairable: the session ends the transactions open on the
// checkpoint partition only when every one is of its own producer ids,
// with a known outcome, at the epoch of that outcome's records.
func TestRepairable(t *testing.T) {
	const pid, other = 7, 9
	// transaction.version 2: the coordinator at 5, the records at 4.
	commitV2 := map[int64]txnOutcome{pid: {TxnID: "binlog-router-a", ProducerID: pid, Epoch: 5, DataEpoch: 4, Committed: true}}
	// transaction.version 0 and 1: both at 5.
	commitV0 := map[int64]txnOutcome{pid: {TxnID: "binlog-router-a", ProducerID: pid, Epoch: 5, DataEpoch: 5, Committed: true}}
	abortV2 := map[int64]txnOutcome{pid: {ProducerID: pid, Epoch: 5, DataEpoch: 4}}
	open := func(id int64, epoch int16) kadm.DescribedProducer {
		return kadm.DescribedProducer{Topic: "cp", ProducerID: id, ProducerEpoch: epoch, CurrentTxnStartOffset: 12}
	}
	closed := kadm.DescribedProducer{Topic: "cp", ProducerID: other, ProducerEpoch: 1, CurrentTxnStartOffset: -1}
	for _, c := range []struct {
		name     string
		open     []kadm.DescribedProducer
		outcomes map[int64]txnOutcome
		want     []repairTarget
	}{
		{"ours, committed, transaction.version 2", []kadm.DescribedProducer{open(pid, 4)}, commitV2,
			[]repairTarget{{Outcome: commitV2[pid], Epoch: 4}}},
		{"ours, committed, transaction.version 0", []kadm.DescribedProducer{open(pid, 5)}, commitV0,
			[]repairTarget{{Outcome: commitV0[pid], Epoch: 5}}},
		{"ours, aborted, beside a closed producer", []kadm.DescribedProducer{open(pid, 4), closed}, abortV2,
			[]repairTarget{{Outcome: abortV2[pid], Epoch: 4}}},
		{"ours, transaction.version 2, open at the coordinator's epoch", []kadm.DescribedProducer{open(pid, 5)}, commitV2, nil},
		{"ours, transaction.version 0, open at the epoch before", []kadm.DescribedProducer{open(pid, 4)}, commitV0, nil},
		{"ours, an older epoch", []kadm.DescribedProducer{open(pid, 3)}, commitV2, nil},
		{"ours, outcome unknown", []kadm.DescribedProducer{open(pid, 4)}, map[int64]txnOutcome{}, nil},
		{"not ours", []kadm.DescribedProducer{open(other, 4)}, commitV2, nil},
		{"ours and another's", []kadm.DescribedProducer{open(pid, 4), open(other, 4)}, commitV2, nil},
		{"none open", []kadm.DescribedProducer{closed}, commitV2, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, repairable(c.open, c.outcomes))
		})
	}
}

// TestKeepUnchanged: an outcome stays known only when the producer's
// epoch after its initialisation is the described one plus one (no other
// transaction of the id ran in between, the producer id is the same).
func TestKeepUnchanged(t *testing.T) {
	outcomes := map[int64]txnOutcome{
		1: {ProducerID: 1, Epoch: 5, DataEpoch: 4, Committed: true},
		2: {ProducerID: 2, Epoch: 5, DataEpoch: 4, Committed: true},
		3: {ProducerID: 3, Epoch: 5, DataEpoch: 4, Committed: true},
	}
	keepUnchanged(outcomes, map[int64]int16{1: 6, 2: 7, 4: 0})
	assert.Equal(t, []int64{1}, keys(outcomes))
}

func keys(m map[int64]txnOutcome) []int64 {
	var ks []int64
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
