package validate

import (
	"errors"
	"strings"
	"testing"
)

func TestJudgeReplication(t *testing.T) {
	for _, tc := range []struct {
		r          replication
		brokers    int
		status     Status
		detail     []string
		fix        []string
		readErrSet bool
	}{
		{replication{3, 2}, 3, OK, []string{"replication factor 3, min.insync.replicas 2: survives the loss of one broker"}, nil, false},
		{replication{5, 3}, 5, OK, []string{"survives"}, nil, false},
		{replication{1, 1}, 1, Warn, []string{"replication factor 1, min.insync.replicas 1", "losing that broker loses it"},
			[]string{"run at least 3 brokers (the cluster has 1)", "min.insync.replicas=2"}, false},
		{replication{3, 1}, 3, Warn, []string{"acknowledged once one broker has it"}, []string{"--entity-name orders --add-config min.insync.replicas=2"}, false},
		{replication{2, 2}, 3, Warn, []string{"losing one broker stops writes"}, []string{"kafka-reassign-partitions.sh"}, false},
		{replication{3, 3}, 3, Warn, []string{"losing one broker stops writes (NOT_ENOUGH_REPLICAS)"}, []string{"min.insync.replicas=2"}, false},
		{replication{2, 3}, 3, Warn, []string{"min.insync.replicas 3 (in effect 2: Kafka counts it up to the replication factor): losing one broker stops writes"},
			[]string{"kafka-reassign-partitions.sh"}, false},
		{replication{1, 2}, 3, Warn, []string{"(in effect 1", "losing that broker loses it"}, []string{"min.insync.replicas=2"}, false},
		{replication{3, 0}, 3, Warn, []string{"min.insync.replicas unknown", "denied"}, []string{"DESCRIBE_CONFIGS"}, true},
	} {
		var readErr error
		if tc.readErrSet {
			readErr = errors.New("denied")
		}
		c := judgeReplication("replication outbox topics", "b:9092", "orders", tc.r, tc.brokers, "orders:", readErr)
		if c.Status != tc.status {
			t.Errorf("%+v: status %s, want %s: %s", tc.r, c.Status, tc.status, c)
		}
		for _, s := range tc.detail {
			if !strings.Contains(c.Detail, s) {
				t.Errorf("%+v: detail %q lacks %q", tc.r, c.Detail, s)
			}
		}
		for _, s := range tc.fix {
			if !strings.Contains(c.Fix, s) {
				t.Errorf("%+v: fix %q lacks %q", tc.r, c.Fix, s)
			}
		}
		if c.Status != OK && c.Fix == "" {
			t.Errorf("%+v: %s without a fix", tc.r, c.Status)
		}
	}
}

func TestJudgeTopicsGroups(t *testing.T) {
	reps := map[string]replication{"a": {3, 2}, "b": {1, 1}, "c": {3, 2}}
	c := judgeTopics("replication outbox topics", "b:9092", []string{"a", "b", "c"},
		func(t string) (replication, bool) { return reps[t], true }, 3)
	if c.Status != Warn || !strings.HasPrefix(c.Detail, "b: replication factor 1") || !strings.Contains(c.Detail, "; a, c: replication factor 3, min.insync.replicas 2") {
		t.Errorf("got %s", c)
	}
}

func TestJudgeTxnLog(t *testing.T) {
	d := brokerDefaults{txnLog: replication{1, 1}}
	c := judgeTxnLog("b:9092", d, 1, func() (replication, bool) { return replication{1, 1}, true })
	if c.Status != Warn || !strings.Contains(c.Detail, "__transaction_state: replication factor 1") ||
		!strings.Contains(c.Detail, "transaction.state.log.replication.factor 1, transaction.state.log.min.isr 1") ||
		!strings.Contains(c.Fix, "transaction.state.log.replication.factor=3") {
		t.Errorf("got %s", c)
	}
	c = judgeTxnLog("b:9092", brokerDefaults{txnLog: replication{3, 2}}, 3, func() (replication, bool) { return replication{}, false })
	if c.Status != OK || !strings.Contains(c.Detail, "does not exist yet") {
		t.Errorf("got %s", c)
	}
}
