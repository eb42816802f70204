package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/acl"
	"github.com/binlog-router/binlog-router/internal/logging"
)

// GroupID is the Kafka consumer group through which routers of one name
// elect their active instance.
func GroupID(name string) string { return "binlog-router-" + name }

// TransactionalID is the Kafka transactional id of a router name: the
// first of its TransactionalIDs.
func TransactionalID(name string) string { return "binlog-router-" + name }

// RecoveryTransactionalID is the transactional id of router name's
// recover, whose transactions write the router's checkpoint record too.
func RecoveryTransactionalID(name string) string { return "binlog-router-recover-" + name }

// TransactionalIDs are the n transactional ids an exactly-once router of
// name uses in turn (SessionConfig.TransactionalIDs): TransactionalID(name),
// then TransactionalID(name) + "#2", "#3", and so on.

func TransactionalIDs(name string, n int) []string {
	ids := make([]string, max(n, 1))
	for i := range ids {
		ids[i] = TransactionalID(name)
		if i > 0 {
			ids[i] += fmt.Sprintf("#%d", i+1)
		}
	}
	return ids
}

// ElectConfig configures an Elector.
type ElectConfig struct {
	Kafka           []kgo.Opt      // connection options
	Name            string         // the router's --name: its group is GroupID(Name)
	CheckpointTopic string         // the single-partition topic the group consumes
	SessionTimeout  time.Duration  // --ha-session-timeout
	Logger          zerolog.Logger // the router's logger
}

// Elector holds a router's membership in its election group. The group
// consumes the single-partition checkpoint topic, so exactly one member
// is assigned partition 0: that member is the active router. Leadership
// is lost when the partition is revoked or lost (session timeout); the
// transactional producer's fencing guarantees that a deposed router that
// has not noticed yet cannot commit.
type Elector struct {
	cl  *kgo.Client
	log zerolog.Logger

	mu     sync.Mutex
	leader chan struct{}      // closed when partition 0 is assigned
	cancel context.CancelFunc // cancels the leadership context
	polled chan struct{}      // closed when poll returns
	fatal  chan error         // a group error retrying cannot fix
	group  string
	topic  string // the checkpoint topic the group consumes
}

// NewElector joins the election group of cfg.Name; Lead waits for the
// active role. Close leaves the group.
func NewElector(cfg ElectConfig) (*Elector, error) {
	e := &Elector{log: cfg.Logger.With().Str("component", "election").Str("group", GroupID(cfg.Name)).Logger(),
		leader: make(chan struct{}), fatal: make(chan error, 1), group: GroupID(cfg.Name), topic: cfg.CheckpointTopic}
	opts := append([]kgo.Opt{}, cfg.Kafka...)
	opts = append(opts,
		kgo.WithLogger(logging.Kgo(cfg.Logger)),
		kgo.ConsumerGroup(GroupID(cfg.Name)),
		kgo.ConsumeTopics(cfg.CheckpointTopic),
		// Sticky and cooperative: a router joining the group does not take
		// the role from the active one.
		kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.SessionTimeout(cfg.SessionTimeout),
		kgo.HeartbeatInterval(max(cfg.SessionTimeout/10, 100*time.Millisecond)),
		kgo.RebalanceTimeout(cfg.SessionTimeout),
		kgo.DisableAutoCommit(),
		kgo.OnPartitionsAssigned(e.assigned),
		kgo.OnPartitionsRevoked(e.revoked),
		kgo.OnPartitionsLost(e.revoked),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("election group client: %w", err)
	}
	e.cl = cl
	e.polled = make(chan struct{})
	go e.poll()
	return e, nil
}

func (e *Elector) assigned(_ context.Context, _ *kgo.Client, parts map[string][]int32) {
	for _, ps := range parts {
		if len(ps) > 0 {
			e.mu.Lock()
			select {
			case <-e.leader:
			default:
				close(e.leader)
			}
			e.mu.Unlock()
		}
	}
}

func (e *Elector) revoked(_ context.Context, _ *kgo.Client, parts map[string][]int32) {
	for _, ps := range parts {
		if len(ps) == 0 {
			continue
		}
		e.mu.Lock()
		if e.cancel != nil {
			e.cancel()
		}
		e.leader = make(chan struct{})
		e.mu.Unlock()
		e.log.Warn().Msg("lost the active role")
	}
}

// Lead blocks until this router is the active one, and returns a context
// that is cancelled when it stops being so (or when ctx ends).
func (e *Elector) Lead(ctx context.Context) (context.Context, error) {
	e.log.Info().Msg("waiting to become the active router")
	for {
		e.mu.Lock()
		leader := e.leader
		e.mu.Unlock()
		select {
		case <-leader:
		case err := <-e.fatal:
			return nil, err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		lctx, cancel := context.WithCancel(ctx)
		e.mu.Lock()
		if e.leader != leader { // revoked meanwhile
			e.mu.Unlock()
			cancel()
			continue
		}
		e.cancel = cancel
		e.mu.Unlock()
		e.log.Info().Msg("this router is active")
		return lctx, nil
	}
}

// poll keeps fetching (and discarding) so the member stays healthy; it
// returns when the client is closed.
func (e *Elector) poll() {
	defer close(e.polled)
	for {
		fs := e.cl.PollFetches(context.Background())
		if fs.IsClientClosed() {
			return
		}
		for _, fe := range fs.Errors() {
			var ke *kerr.Error
			if errors.As(fe.Err, &ke) && !ke.Retriable {
				err := fmt.Errorf("joining election group %s: %w (with --ha, --ha-session-timeout must be within the brokers' group.min/max.session.timeout.ms, 6s-30m by default)", e.group, fe.Err)
				if acl.Denied(fe.Err) {
					err = fmt.Errorf("joining election group %s: %w", e.group,
						acl.Hint(acl.Hint(fe.Err, "READ", acl.Group(e.group)), "READ", acl.Topic(e.topic)))
				}
				select {
				case e.fatal <- err:
				default:
				}
			}
		}
	}
}

// Close leaves the group at once, so a standby takes over without waiting
// for the session timeout.
func (e *Elector) Close() {
	e.cl.LeaveGroup()
	e.cl.Close()
	<-e.polled
}
