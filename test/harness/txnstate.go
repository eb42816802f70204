package harness

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/relay"
)

// RouterTxnIDs are the transactional ids a router of name uses in turn
// with the default --kafka-transactions.
func RouterTxnIDs(name string) []string {
	return kafka.TransactionalIDs(name, relay.DefaultKafkaTransactions)
}

// TxnState returns the state Kafka's transaction coordinator holds for
// the transaction of the ids (RouterTxnIDs; see TxnProbe.describe):
// Empty, Ongoing, PrepareCommit, CompleteCommit, PrepareAbort,
// CompleteAbort, ..., or "" when it knows none of them. It waits while the
// coordinator is loading or moving.
func TxnState(t testing.TB, brokers []string, ids ...string) string {
	t.Helper()
	d, err := DescribeTxn(brokers, ids...)
	if err != nil {
		t.Fatal(err)
	}
	return d.State
}

// DescribeTxnState is TxnState for goroutines that cannot fail a test.
func DescribeTxnState(brokers []string, ids ...string) (string, error) {
	d, err := DescribeTxn(brokers, ids...)
	return d.State, err
}

// DescribeTxn describes the transaction of the ids (TxnProbe.describe),
// waiting while the coordinator is loading or moving.
func DescribeTxn(brokers []string, ids ...string) (kadm.DescribedTransaction, error) {
	p, err := NewTxnProbe(brokers, ids...)
	if err != nil {
		return kadm.DescribedTransaction{}, err
	}
	defer p.Close()
	return p.Describe()
}

// TxnProbe asks the transaction coordinator about the transactional ids
// one producer uses in turn, over one client, for tests that ask often.
type TxnProbe struct {
	cl  *kgo.Client
	adm *kadm.Client
	IDs []string
}

// NewTxnProbe asks the brokers about the transactions of ids; Close
// releases its client.
func NewTxnProbe(brokers []string, ids ...string) (*TxnProbe, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return nil, err
	}
	return &TxnProbe{cl: cl, adm: kadm.NewClient(cl), IDs: ids}, nil
}

// Close releases the probe's client.
func (p *TxnProbe) Close() { p.cl.Close() }

// Ongoing reports whether the producer's transaction is open (false when
// it cannot be told within 30 s).
func (p *TxnProbe) Ongoing() bool {
	d, err := p.Describe()
	return err == nil && d.State == "Ongoing"
}

// State asks once for the state of id's transaction (Ongoing,
// PrepareCommit, ...), within 5 s; it names the error instead when the
// coordinator does not answer with one.
func (p *TxnProbe) State(id string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	txns, err := p.adm.DescribeTransactions(ctx, id)
	if d, ok := txns[id]; err == nil && ok && d.Err == nil {
		return d.State
	} else if ok && d.Err != nil {
		err = d.Err
	}
	return fmt.Sprintf("unknown (%v)", err)
}

// Describe returns the state of the first id whose transaction is not
// finished (Ongoing or Prepare*: the producer's current one, as it begins
// a transaction only once the one before is committed), or else of the
// first id the coordinator knows; the zero value when it knows none.
func (p *TxnProbe) Describe() (kadm.DescribedTransaction, error) {
	var none kadm.DescribedTransaction
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		txns, err := p.adm.DescribeTransactions(ctx, p.IDs...)
		cancel()
		if err == nil || errors.Is(err, kerr.TransactionalIDNotFound) {
			var found *kadm.DescribedTransaction
			for _, id := range p.IDs {
				d, ok := txns[id]
				switch {
				case !ok || errors.Is(d.Err, kerr.TransactionalIDNotFound):
					continue
				case d.Err != nil:
					err = d.Err
				case d.State == "Ongoing" || strings.HasPrefix(d.State, "Prepare"):
					return d, nil
				case found == nil:
					found = &d
				}
			}
			if err == nil || errors.Is(err, kerr.TransactionalIDNotFound) {
				if found != nil {
					return *found, nil
				}
				return none, nil
			}
		}
		if time.Now().After(deadline) {
			return none, fmt.Errorf("describing transactional ids %s: %w", strings.Join(p.IDs, ", "), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ApacheKills is the crash loop's view of an Apache Kafka broker: the
// router reaches it through proxy, which can kill the router at its next
// produce request, and the transaction coordinator, asked once the router
// is dead, tells whether its transaction (of TxnIDs) was open (none for
// the idempotent producer of at-least-once, which has no transaction).
type ApacheKills struct {
	T       testing.TB
	Proxy   *KafkaProxy
	Brokers []string
	TxnIDs  []string
}

// Kill kills the router now and reports whether its transaction was open.
func (a *ApacheKills) Kill(kill func()) bool {
	kill()
	return a.open(0)
}

// KillAtProduce kills the router when its next produce request reaches
// the proxy, then forwards the request: the broker appends its records
// for a dead producer, in a transaction the next instance must abort.
func (a *ApacheKills) KillAtProduce(kill func(), timeout time.Duration) (open, hit bool) {
	tr := a.Proxy.At(kmsg.Produce, func() ProxyAction {
		kill()
		return Forward
	})
	if hit = a.Proxy.Wait(tr, timeout); !hit {
		kill()
		return a.open(0), false
	}
	// The forwarded request may open the transaction (transaction.version
	// 2 adds its partitions at the first produce): give it a moment.
	return a.open(2 * time.Second), true
}

// open reports whether the dead router's transaction is Ongoing, waiting
// up to wait for it to become so.
func (a *ApacheKills) open(wait time.Duration) bool {
	if len(a.TxnIDs) == 0 {
		return false
	}
	deadline := time.Now().Add(wait)
	for {
		if TxnState(a.T, a.Brokers, a.TxnIDs...) == "Ongoing" {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}
