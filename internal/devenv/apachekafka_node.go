package devenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kafkaReadyTimeout bounds how long a node may take to serve metadata.
const kafkaReadyTimeout = 90 * time.Second

// kafkaNode is one combined broker and controller.
type kafkaNode struct {
	id             int
	port           int
	controllerPort int
	extra          map[string]int // extra listener name -> port
	dir            string

	mu   sync.Mutex
	proc *process // nil when not running
}

func (n *kafkaNode) addr() string      { return net.JoinHostPort("127.0.0.1", strconv.Itoa(n.port)) }
func (n *kafkaNode) dataDir() string   { return filepath.Join(n.dir, "data") }
func (n *kafkaNode) propsFile() string { return filepath.Join(n.dir, "server.properties") }
func (n *kafkaNode) logFile() string   { return filepath.Join(n.dir, "server.log") }

func (n *kafkaNode) kill() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc != nil {
		_ = n.proc.cmd.Process.Signal(syscall.SIGCONT) // a stopped JVM dies of SIGKILL too, but be sure
		n.proc.kill()
		n.proc = nil
	}
}

// StartNode starts node i on its data dir (formatted once, by
// StartApacheKafka; a restart reuses it) and returns once it serves metadata
// for this cluster. If it fails, the node is not running and the error
// carries the tail of its log.
func (k *ApacheKafka) StartNode(ctx context.Context, i int) error {
	n := k.nodes[i]
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc != nil {
		return fmt.Errorf("starting kafka node %d: already running", n.id)
	}
	logStart := fileSize(n.logFile())
	p, err := k.spawn(n)
	if err != nil {
		return fmt.Errorf("starting kafka node %d: %w", n.id, err)
	}
	if err := k.waitNode(ctx, n, p); err != nil {
		p.kill()
		b, _ := os.ReadFile(n.logFile())
		if logStart <= int64(len(b)) {
			b = b[logStart:]
		}
		if strings.Contains(string(b), "Address already in use") {
			err = fmt.Errorf("%w: %w", err, errPortInUse)
		}
		return fmt.Errorf("starting kafka node %d on %s: %w\n--- tail of %s ---\n%s",
			n.id, n.addr(), err, n.logFile(), lastLines(string(b), 40))
	}
	n.proc = p
	return nil
}

// StopNode shuts node i down gracefully (SIGTERM: controlled shutdown moves
// its leaderships away) and waits for it to exit; if ctx ends first it is
// killed. Stopping a node that is not running does nothing.
func (k *ApacheKafka) StopNode(ctx context.Context, i int) error {
	n := k.nodes[i]
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.proc
	if p == nil {
		return nil
	}
	n.proc = nil
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		p.kill()
		return fmt.Errorf("stopping kafka node %d: %w", n.id, err)
	}
	select {
	case <-p.exited:
		return nil
	case <-ctx.Done():
		p.kill()
		return fmt.Errorf("stopping kafka node %d: %w; killed it instead", n.id, ctx.Err())
	}
}

// KillNode ends node i with SIGKILL, as a crash would, and waits for it to
// exit. Its log has not necessarily been flushed to disk (Kafka relies on
// replication, not fsync), but the page cache keeps what was written.
func (k *ApacheKafka) KillNode(i int) { k.nodes[i].kill() }

// PauseNode stops node i with SIGSTOP; ResumeNode continues it.
func (k *ApacheKafka) PauseNode(i int) error { return k.signal(i, syscall.SIGSTOP) }

// ResumeNode continues node i after PauseNode.
func (k *ApacheKafka) ResumeNode(i int) error { return k.signal(i, syscall.SIGCONT) }

func (k *ApacheKafka) signal(i int, sig syscall.Signal) error {
	n := k.nodes[i]
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil {
		return fmt.Errorf("signalling kafka node %d: not running", n.id)
	}
	return n.proc.cmd.Process.Signal(sig)
}

// Pid is the process id of node i's JVM, or 0 when it is not running (for
// the benchmark's CPU accounting).
func (k *ApacheKafka) Pid(i int) int {
	n := k.nodes[i]
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil {
		return 0
	}
	return n.proc.cmd.Process.Pid
}

// Running reports whether node i was started and not stopped or killed.
func (k *ApacheKafka) Running(i int) bool {
	n := k.nodes[i]
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.proc != nil
}

// Restart stops every node (SIGKILL when kill is set, else gracefully) and
// starts them again on the same data dirs.
func (k *ApacheKafka) Restart(ctx context.Context, kill bool) error {
	for i := range k.nodes {
		if kill {
			k.KillNode(i)
		} else if err := k.StopNode(ctx, i); err != nil {
			return err
		}
	}
	if err := k.startAll(ctx); err != nil {
		return err
	}
	return k.waitBrokers(ctx, len(k.nodes))
}

func (k *ApacheKafka) spawn(n *kafkaNode) (*process, error) {
	logFile, err := os.OpenFile(n.logFile(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening log: %w", err)
	}
	defer logFile.Close()
	flags := k.cfg.JVMFlags
	if flags == nil {
		flags = []string{"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"}
	}
	args := append([]string{"-Xmx" + k.cfg.Heap, "-Xms64m", "-Xss512k", "-Xshare:auto",
		"-Djava.awt.headless=true",
		"-Dlog4j2.configurationFile=" + k.log4jConfig(),
		"-Dkafka.logs.dir=" + n.dir,
	}, flags...)
	args = append(args, "-cp", filepath.Join(k.jars, "*"), "kafka.Kafka", n.propsFile())
	cmd := exec.Command(k.java, args...)
	cmd.Dir = n.dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("running %s: %w", k.java, err)
	}
	p := &process{cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// waitNode polls node n until it answers a metadata request with this
// cluster's id, the process exits, or the deadline passes.
func (k *ApacheKafka) waitNode(ctx context.Context, n *kafkaNode, p *process) error {
	ctx, cancel := context.WithTimeout(ctx, kafkaReadyTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		lastErr = k.probe(ctx, n.addr())
		if lastErr == nil {
			return nil
		}
		if errors.Is(lastErr, errPortInUse) {
			return lastErr
		}
		select {
		case <-p.exited:
			return fmt.Errorf("kafka exited during startup: %v", p.err)
		case <-ctx.Done():
			return fmt.Errorf("waiting for kafka to serve metadata: %w (last error: %v)", ctx.Err(), lastErr)
		case <-tick.C:
		}
	}
}

// probe asks addr for metadata and checks the cluster id.
func (k *ApacheKafka) probe(ctx context.Context, addr string) error {
	resp, err := k.metadata(ctx, addr)
	if err != nil {
		return err
	}
	if resp.ClusterID == nil || *resp.ClusterID != k.clusterID {
		got := "<none>"
		if resp.ClusterID != nil {
			got = *resp.ClusterID
		}
		return fmt.Errorf("%s is served by another cluster (id %s, want %s): %w", addr, got, k.clusterID, errPortInUse)
	}
	return nil
}

func (k *ApacheKafka) metadata(ctx context.Context, addr string) (*kmsg.MetadataResponse, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0), kgo.DialTimeout(time.Second))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	resp, err := cl.SeedBrokers()[0].Request(rctx, kmsg.NewPtrMetadataRequest())
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.MetadataResponse), nil
}

// waitBrokers waits until the first running node lists want brokers.
func (k *ApacheKafka) waitBrokers(ctx context.Context, want int) error {
	ctx, cancel := context.WithTimeout(ctx, kafkaReadyTimeout)
	defer cancel()
	for {
		var got int
		var lastErr error
		for i, n := range k.nodes {
			if !k.Running(i) {
				continue
			}
			resp, err := k.metadata(ctx, n.addr())
			if err != nil {
				lastErr = err
				continue
			}
			got = len(resp.Brokers)
			break
		}
		if got >= want {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d kafka brokers to register (have %d, last error %v): %w", want, got, lastErr, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// WaitBrokers waits until the cluster's metadata lists want live brokers,
// e.g. after a node is restarted.
func (k *ApacheKafka) WaitBrokers(ctx context.Context, want int) error {
	return k.waitBrokers(ctx, want)
}

// startAll starts every node at once: a KRaft quorum forms only when a
// majority of its voters is up, so nodes started one by one would each wait.
func (k *ApacheKafka) startAll(ctx context.Context) error {
	errs := make([]error, len(k.nodes))
	var wg sync.WaitGroup
	for i := range k.nodes {
		wg.Go(func() { errs[i] = k.StartNode(ctx, i) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
