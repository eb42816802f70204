package validate

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/gtid"
)

func TestValidateCheckTopic(t *testing.T) {
	partitions := func(n, replicas int) kadm.TopicDetail {
		d := kadm.TopicDetail{Partitions: map[int32]kadm.PartitionDetail{}}
		for i := range n {
			d.Partitions[int32(i)] = kadm.PartitionDetail{Partition: int32(i), Replicas: make([]int32, replicas)}
		}
		return d
	}
	base := topicInput{topic: "cp", brokers: "k1:9092", numBrokers: 3, exists: true, detail: partitions(1, 3), policy: "compact"}
	tests := []struct {
		name   string
		edit   func(*topicInput)
		status Status
		want   []string
	}{
		{"good", func(*topicInput) {}, OK, []string{"cp: cleanup.policy=compact, 1 partition, replication factor 3"}},
		{"missing", func(in *topicInput) { in.exists = false }, OK, []string{"does not exist yet", "replication factor 3"}},
		{"missing, one broker", func(in *topicInput) { in.exists, in.numBrokers = false, 1 }, OK, []string{"replication factor 1"}},
		{"delete", func(in *topicInput) { in.policy = "delete" }, Fail,
			[]string{"cleanup.policy=delete", "kafka-configs.sh --bootstrap-server k1:9092 --alter --entity-type topics --entity-name cp --add-config cleanup.policy=compact"}},
		{"compact,delete", func(in *topicInput) { in.policy = "compact,delete" }, Fail, []string{"cleanup.policy=compact,delete"}},
		{"partitions", func(in *topicInput) { in.detail = partitions(6, 3) }, Fail, []string{"6 partitions", "--partitions 1 --config cleanup.policy=compact", "--checkpoint-topic cp.v2"}},
		{"under-replicated", func(in *topicInput) { in.detail = partitions(1, 1) }, Warn, []string{"replication factor 1 on 3 brokers"}},
		{"policy unreadable", func(in *topicInput) { in.policy, in.policyErr = "", kerr.TopicAuthorizationFailed }, Warn, []string{"DESCRIBE_CONFIGS"}},
		{"policy not reported", func(in *topicInput) { in.policy = "" }, Warn, []string{"did not report"}},
		{"describe denied", func(in *topicInput) { in.err = kerr.TopicAuthorizationFailed }, Fail, []string{"cannot describe cp", "DESCRIBE, READ and WRITE"}},
	}
	for _, tt := range tests {
		in := base
		tt.edit(&in)
		c := checkTopic(in)
		assert.Equal(t, tt.status, c.Status, "%s: %s", tt.name, c)
		for _, w := range tt.want {
			assert.Contains(t, c.String(), w, tt.name)
		}
	}
}

func TestValidateJudgeTxnInit(t *testing.T) {
	const id = "binlog-router-validate-x"
	tests := []struct {
		err     error
		brokers int
		status  Status
		want    string
	}{
		{nil, 3, OK, "supported: a transactional producer with the throwaway id " + id},
		{nil, 1, Warn, "the cluster has 1 broker(s)"},
		{kerr.TransactionalIDAuthorizationFailed, 3, Warn, "WRITE and DESCRIBE on transactional id binlog-router-<name>"},
		{kerr.ClusterAuthorizationFailed, 3, Fail, "IDEMPOTENT_WRITE"},
		{fmt.Errorf("waiting: %w", kerr.CoordinatorNotAvailable), 3, Fail, "transaction.state.log.replication.factor"},
	}
	for _, tt := range tests {
		c := judgeTxnInit(id, tt.err, tt.brokers)
		assert.Equal(t, tt.status, c.Status, c.String())
		assert.Contains(t, c.String(), tt.want)
	}
}

func TestValidateCheckCheckpoint(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	cp := &checkpoint.Checkpoint{Name: "r", GTIDSet: "0-1-42", Flavor: "mariadb", ServerID: 1, Time: now.Add(-90 * time.Second)}
	in := checkpointInput{name: "r", topic: "cp", start: "earliest", cp: cp, flavor: gtid.MariaDB, now: now}
	c := checkCheckpoint(in)
	assert.Equal(t, "OK   checkpoint: [0-1-42] written 2025-03-01T11:58:30Z (1m30s ago) for a mariadb server (server_id 1)", c.String())

	in.flavor = gtid.MySQL
	c = checkCheckpoint(in)
	assert.Equal(t, Fail, c.Status)
	assert.Contains(t, c.String(), "but the server is mysql")

	c = checkCheckpoint(checkpointInput{name: "r", topic: "cp", start: "latest",
		err: fmt.Errorf("%w for %q", checkpoint.ErrCheckpointMissing, "r")})
	assert.Equal(t, "OK   checkpoint: none stored for --name r in cp; the router starts at --start latest", c.String())

	c = checkCheckpoint(checkpointInput{name: "r", topic: "cp", err: errors.New("TOPIC_AUTHORIZATION_FAILED")})
	assert.Equal(t, Fail, c.Status)
	assert.Contains(t, c.Fix, "READ on topic cp")
}
