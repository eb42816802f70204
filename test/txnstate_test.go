package test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnState returns the state Kafka's transaction coordinator holds for
// the transactional id (Empty, Ongoing, PrepareCommit, CompleteCommit,
// PrepareAbort, CompleteAbort, ...), "" when it does not know the id. It
// waits while the coordinator is loading or moving.
func txnState(t testing.TB, brokers []string, id string) string {
	t.Helper()
	d, err := describeTxn(brokers, id)
	if err != nil {
		t.Fatal(err)
	}
	return d.State
}

// describeTxnState is txnState for goroutines that cannot fail a test.
func describeTxnState(brokers []string, id string) (string, error) {
	d, err := describeTxn(brokers, id)
	return d.State, err
}

// describeTxn describes the transactional id (the zero value when the
// coordinator does not know it), waiting while the coordinator is loading
// or moving.
func describeTxn(brokers []string, id string) (kadm.DescribedTransaction, error) {
	p, err := newTxnProbe(brokers, id)
	if err != nil {
		return kadm.DescribedTransaction{}, err
	}
	defer p.close()
	return p.describe()
}

// txnProbe asks the transaction coordinator about one transactional id
// over one client, for tests that ask often.
type txnProbe struct {
	cl  *kgo.Client
	adm *kadm.Client
	id  string
}

func newTxnProbe(brokers []string, id string) (*txnProbe, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return nil, err
	}
	return &txnProbe{cl: cl, adm: kadm.NewClient(cl), id: id}, nil
}

func (p *txnProbe) close() { p.cl.Close() }

// ongoing reports whether the id's transaction is open (false when it
// cannot be told within 30 s).
func (p *txnProbe) ongoing() bool {
	d, err := p.describe()
	return err == nil && d.State == "Ongoing"
}

func (p *txnProbe) describe() (kadm.DescribedTransaction, error) {
	var none kadm.DescribedTransaction
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		txns, err := p.adm.DescribeTransactions(ctx, p.id)
		cancel()
		if err == nil {
			d, ok := txns[p.id]
			switch {
			case !ok || errors.Is(d.Err, kerr.TransactionalIDNotFound):
				return none, nil
			case d.Err == nil:
				return d, nil
			}
			err = d.Err
		}
		if errors.Is(err, kerr.TransactionalIDNotFound) {
			return none, nil
		}
		if time.Now().After(deadline) {
			return none, fmt.Errorf("describing transactional id %s: %w", p.id, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// apacheKills is the crash loop's view of an Apache Kafka broker: the
// router reaches it through proxy, which can kill the router at its next
// produce request, and the transaction coordinator, asked once the router
// is dead, tells whether its transaction txnID was open ("" for the
// idempotent producer of at-least-once, which has none).
type apacheKills struct {
	t       testing.TB
	proxy   *kafkaProxy
	brokers []string
	txnID   string
}

func (a *apacheKills) kill(kill func()) bool {
	kill()
	return a.open(0)
}

// killAtProduce kills the router when its next produce request reaches
// the proxy, then forwards the request: the broker appends its records
// for a dead producer, in a transaction the next instance must abort.
func (a *apacheKills) killAtProduce(kill func(), timeout time.Duration) (open, hit bool) {
	tr := a.proxy.at(kmsg.Produce, func() proxyAction {
		kill()
		return forward
	})
	if hit = a.proxy.wait(tr, timeout); !hit {
		kill()
		return a.open(0), false
	}
	// The forwarded request may open the transaction (transaction.version
	// 2 adds its partitions at the first produce): give it a moment.
	return a.open(2 * time.Second), true
}

// open reports whether the dead router's transaction is Ongoing, waiting
// up to wait for it to become so.
func (a *apacheKills) open(wait time.Duration) bool {
	if a.txnID == "" {
		return false
	}
	deadline := time.Now().Add(wait)
	for {
		if txnState(a.t, a.brokers, a.txnID) == "Ongoing" {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}
