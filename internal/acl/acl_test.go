package acl

import (
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestHint(t *testing.T) {
	wrapped := fmt.Errorf("producing to topic orders: %w", kerr.TopicAuthorizationFailed)
	for _, c := range []struct {
		err  error
		op   string
		r    Resource
		want string
	}{
		{wrapped, "WRITE", Topic("orders"), "producing to topic orders: TOPIC_AUTHORIZATION_FAILED: Not authorized to access topics: [Topic authorization failed.]; grant the router's Kafka principal WRITE on topic orders"},
		{kerr.GroupAuthorizationFailed, "READ", Group("binlog-router-a"), "; grant the router's Kafka principal READ on group binlog-router-a"},
		{kerr.TransactionalIDAuthorizationFailed, "WRITE", TransactionalID("binlog-router-a"), "; grant the router's Kafka principal WRITE on transactional id binlog-router-a"},
		{kerr.ClusterAuthorizationFailed, "IDEMPOTENT_WRITE", Cluster(), "; grant the router's Kafka principal IDEMPOTENT_WRITE on the cluster"},
		// Another kind of error, or another kind of denial: unchanged.
		{wrapped, "READ", Group("g"), wrapped.Error()},
		{kerr.UnknownTopicOrPartition, "WRITE", Topic("orders"), kerr.UnknownTopicOrPartition.Error()},
	} {
		got := Hint(c.err, c.op, c.r)
		if !errors.Is(got, c.err) {
			t.Errorf("%v: the hint does not wrap the error", c.err)
		}
		if s := got.Error(); len(s) < len(c.want) || s[len(s)-len(c.want):] != c.want {
			t.Errorf("got %q, want it to end with %q", s, c.want)
		}
	}
	if Hint(nil, "WRITE", Topic("t")) != nil {
		t.Error("nil stays nil")
	}
}
