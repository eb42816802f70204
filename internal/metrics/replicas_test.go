package metrics

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func metadataOf(topics map[string][]kmsg.MetadataResponseTopicPartition) *kmsg.MetadataResponse {
	resp := kmsg.NewPtrMetadataResponse()
	for name, parts := range topics {
		t := kmsg.NewMetadataResponseTopic()
		t.Topic = kmsg.StringPtr(name)
		t.Partitions = parts
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

func partition(p, leader int32, replicas, isr []int32) kmsg.MetadataResponseTopicPartition {
	mp := kmsg.NewMetadataResponseTopicPartition()
	mp.Partition, mp.Leader, mp.Replicas, mp.ISR = p, leader, replicas, isr
	return mp
}

func TestJudgePartitions(t *testing.T) {
	all := []int32{1, 2, 3}
	meta := metadataOf(map[string][]kmsg.MetadataResponseTopicPartition{
		"orders": {
			partition(0, 1, all, all),
			partition(1, 2, all, []int32{2}),    // below 2
			partition(2, -1, all, []int32{}),    // no leader
			partition(3, 3, all, []int32{3, 1}), // at the minimum
		},
		"unknown-min": {partition(0, 1, all, []int32{1})},        // min.insync.replicas not readable
		"lone":        {partition(0, 2, []int32{2}, []int32{2})}, // min.insync.replicas 2 counts as 1
	})
	denied := kmsg.NewMetadataResponseTopic()
	denied.Topic, denied.ErrorCode = kmsg.StringPtr("__transaction_state"), kerr.TopicAuthorizationFailed.Code
	meta.Topics = append(meta.Topics, denied)

	got := judgePartitions(meta, map[string]int{"orders": 2, "lone": 2})
	if len(got) != 2 {
		t.Fatalf("got %d problems, want 2: %v", len(got), got)
	}
	if got[0].Partition != 1 || got[0].Reason() != "below_min_insync_replicas" || got[0].MinISR != 2 {
		t.Errorf("first problem %+v", got[0])
	}
	if want := "orders/1 has 1 in-sync replica(s) [2] of 3, min.insync.replicas=2 (produce answers NOT_ENOUGH_REPLICAS)"; got[0].String() != want {
		t.Errorf("got %q, want %q", got[0].String(), want)
	}
	if got[1].Partition != 2 || got[1].Reason() != "no_leader" {
		t.Errorf("second problem %+v", got[1])
	}
}

// TestReplicaWatchReports: a change is logged once, /readyz and the gauge
// follow the last look, and the return to normal is logged with how long
// it took.
func TestReplicaWatchReports(t *testing.T) {
	clk := newFakeClock()
	m := New(nil, Clock(clk.now))
	var buf bytes.Buffer
	w := NewReplicaWatch(m, zerolog.New(&buf), ReplicaWatchConfig{})
	base := serve(t, m, w.Ready)

	all := []int32{1, 2, 3}
	below := judgePartitions(metadataOf(map[string][]kmsg.MetadataResponseTopicPartition{
		"orders": {partition(0, 1, all, []int32{1, 2}), partition(1, 2, all, []int32{2, 3})},
	}), map[string]int{"orders": 3})
	w.update(below, clk.now())
	clk.advance(5 * time.Second)
	w.update(below, clk.now()) // unchanged: no second warning
	if n := strings.Count(buf.String(), `"level":"warn"`); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, buf.String())
	}
	if !strings.Contains(buf.String(), "orders/0 has 2 in-sync replica(s) [1 2] of 3, min.insync.replicas=3") {
		t.Errorf("warning does not name the partition:\n%s", buf.String())
	}
	code, body := get(t, base+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "kafka refuses writes to 2 partition(s)") || !strings.Contains(body, "NOT_ENOUGH_REPLICAS") {
		t.Errorf("/readyz: %d %q", code, body)
	}
	mfs := scrape(t, base)
	if v := value(t, mfs, "binlog_router_kafka_partitions_refusing_writes", "reason", "below_min_insync_replicas"); v != 2 {
		t.Errorf("gauge below_min_insync_replicas = %v, want 2", v)
	}
	if v := value(t, mfs, "binlog_router_kafka_partitions_refusing_writes", "reason", "no_leader"); v != 0 {
		t.Errorf("gauge no_leader = %v, want 0", v)
	}

	clk.advance(7 * time.Second)
	buf.Reset()
	w.update(nil, clk.now())
	if !strings.Contains(buf.String(), "kafka accepts writes again") || !strings.Contains(buf.String(), `"after":12000`) {
		t.Errorf("return to normal not logged with its duration:\n%s", buf.String())
	}
	if err := w.Ready(); err != nil {
		t.Errorf("Ready after the problems cleared: %v", err)
	}
	if v := value(t, scrape(t, base), "binlog_router_kafka_partitions_refusing_writes", "reason", "below_min_insync_replicas"); v != 0 {
		t.Errorf("gauge after recovery = %v, want 0", v)
	}
}
