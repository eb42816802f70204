// Package acl turns Kafka's authorization errors into the ACL an operator
// must grant: every command that meets TOPIC_AUTHORIZATION_FAILED,
// GROUP_AUTHORIZATION_FAILED, TRANSACTIONAL_ID_AUTHORIZATION_FAILED or
// CLUSTER_AUTHORIZATION_FAILED says which operation on which resource is
// missing, in the words of Kafka's ACLs (kafka-acls.sh).
package acl

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Resource is a Kafka ACL resource.
type Resource struct {
	kind string
	name string
	err  *kerr.Error // the authorization error that names its kind
}

// Topic is the topic name.
func Topic(name string) Resource {
	return Resource{kind: "topic", name: name, err: kerr.TopicAuthorizationFailed}
}

// Group is the consumer group name.
func Group(name string) Resource {
	return Resource{kind: "group", name: name, err: kerr.GroupAuthorizationFailed}
}

// TransactionalID is the transactional id name.
func TransactionalID(name string) Resource {
	return Resource{kind: "transactional id", name: name, err: kerr.TransactionalIDAuthorizationFailed}
}

// Cluster is the cluster resource.
func Cluster() Resource {
	return Resource{kind: "cluster", err: kerr.ClusterAuthorizationFailed}
}

func (r Resource) String() string {
	if r.name == "" {
		return "the " + r.kind
	}
	return r.kind + " " + r.name
}

// Hint returns err with the grant that cures it when err is the
// authorization error of r's kind: "...; grant the router's Kafka
// principal WRITE on topic orders". Any other error is returned as it is.
// op is the operation, as kafka-acls.sh names it (READ, WRITE, CREATE,
// DESCRIBE, ...), with any words that go with it.
func Hint(err error, op string, r Resource) error {
	if err == nil || !errors.Is(err, r.err) {
		return err
	}
	return fmt.Errorf("%w; grant the router's Kafka principal %s on %s", err, op, r)
}

// Denied reports whether err is one of Kafka's authorization errors.
func Denied(err error) bool {
	return errors.Is(err, kerr.TopicAuthorizationFailed) || errors.Is(err, kerr.GroupAuthorizationFailed) ||
		errors.Is(err, kerr.TransactionalIDAuthorizationFailed) || errors.Is(err, kerr.ClusterAuthorizationFailed)
}
