package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/binlog-router/binlog-router/internal/acl"
	"github.com/binlog-router/binlog-router/internal/checkpoint"
)

// DescribeActivity reads the members of group and the state of the
// transactional ids (the first in a transaction, or else the first Kafka
// knows: Activity.TransactionalID). A group or id that Kafka does not know
// is no activity, not an error.
func DescribeActivity(ctx context.Context, adm *kadm.Client, group string, transactionalIDs ...string) (checkpoint.Activity, error) {
	var a checkpoint.Activity
	var groups kadm.DescribedGroups
	err := retryCoordinator(ctx, func() error {
		var err error
		groups, err = adm.DescribeGroups(ctx, group)
		if err == nil {
			if g, ok := groups[group]; ok && g.Err != nil && kerr.IsRetriable(g.Err) {
				err = g.Err
			}
		}
		return err
	})
	if err != nil {
		return a, fmt.Errorf("describing consumer group %q: %w", group, acl.Hint(err, "DESCRIBE (READ with --ha)", acl.Group(group)))
	}
	if g, ok := groups[group]; ok {
		if g.Err != nil && !errors.Is(g.Err, kerr.GroupIDNotFound) {
			return a, fmt.Errorf("describing consumer group %q: %w", group, acl.Hint(g.Err, "DESCRIBE (READ with --ha)", acl.Group(group)))
		}
		for _, m := range g.Members {
			// Apache Kafka reports the host as Java prints an address
			// ("/127.0.0.1"), kfake as host:port.
			a.Members = append(a.Members, m.ClientID+"@"+strings.TrimPrefix(m.ClientHost, "/"))
		}
	}
	for _, id := range transactionalIDs {
		t, err := describeTransaction(ctx, adm, id)
		if err != nil {
			return a, err
		}
		if t.TxnState == "" || (a.TxnState != "" && !t.InTransaction()) {
			continue
		}
		t.Members = a.Members
		a = t
		if a.InTransaction() {
			break
		}
	}
	return a, nil
}

// describeTransaction reads the state of transactionalID into an
// Activity without members; its TxnState is "" when Kafka does not know
// the id.
func describeTransaction(ctx context.Context, adm *kadm.Client, transactionalID string) (checkpoint.Activity, error) {
	a := checkpoint.Activity{TransactionalID: transactionalID}
	var txns kadm.DescribedTransactions
	err := retryCoordinator(ctx, func() error {
		var err error
		txns, err = adm.DescribeTransactions(ctx, transactionalID)
		if err == nil {
			if t, ok := txns[transactionalID]; ok && t.Err != nil && kerr.IsRetriable(t.Err) {
				err = t.Err
			}
		}
		return err
	})
	if err != nil && !errors.Is(err, kerr.TransactionalIDNotFound) {
		return a, fmt.Errorf("describing transactional id %q: %w", transactionalID, acl.Hint(err, "DESCRIBE (implied by WRITE)", acl.TransactionalID(transactionalID)))
	}
	if t, ok := txns[transactionalID]; ok {
		switch {
		case errors.Is(t.Err, kerr.TransactionalIDNotFound):
		case t.Err != nil:
			return a, fmt.Errorf("describing transactional id %q: %w", transactionalID, acl.Hint(t.Err, "DESCRIBE (implied by WRITE)", acl.TransactionalID(transactionalID)))
		default:
			a.TxnState = t.State
			if t.StartTimestamp > 0 {
				a.TxnStart = time.UnixMilli(t.StartTimestamp)
			}
		}
	}
	return a, nil
}

// coordinatorWait bounds how long a describe call waits for a coordinator
// that is not available yet: a fresh Apache Kafka broker loads its group and
// transaction coordinators lazily and answers COORDINATOR_NOT_AVAILABLE or
// COORDINATOR_LOAD_IN_PROGRESS meanwhile.
const coordinatorWait = 30 * time.Second

// retryCoordinator calls fn until it returns nil or an error that Kafka
// does not mark retriable, for at most coordinatorWait.
func retryCoordinator(ctx context.Context, fn func() error) error {
	deadline := time.Now().Add(coordinatorWait)
	backoff := 100 * time.Millisecond
	for {
		err := fn()
		if err == nil || !kerr.IsRetriable(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return err
		}
		backoff = min(2*backoff, time.Second)
	}
}
