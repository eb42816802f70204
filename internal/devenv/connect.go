package devenv

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// connectReadyTimeout bounds how long a worker may take to answer REST
// requests after its JVM started: plugin scanning, joining its group and
// reading its config, offset and status topics.
const connectReadyTimeout = 3 * time.Minute

// ConnectConfig configures a private Kafka Connect worker in distributed
// mode: one JVM whose offsets, connector configs and statuses live in Kafka
// topics, with Debezium's connector plugin on its plugin.path.
type ConnectConfig struct {
	// Brokers are the worker's bootstrap.servers (required).
	Brokers []string
	// Props are the worker properties, e.g. ReadProperties of
	// examples/debezium/connect-distributed.properties. The worker's
	// addresses are set over them: bootstrap.servers, listeners,
	// rest.advertised.host.name, rest.advertised.port and plugin.path.
	Props map[string]string
	// Version is the Debezium release; empty means DebeziumVersion().
	Version string
	// Connector is "mariadb" (default) or "mysql".
	Connector string
	// Heap is the JVM's -Xmx; empty means 512m.
	Heap string
	// JVMFlags replace the default JIT and GC flags (C1 only and the serial
	// collector, which start fast and stay light on two cores). The
	// benchmark passes ConnectScriptJVMFlags, what connect-distributed.sh
	// runs with.
	JVMFlags []string
}

// ConnectScriptJVMFlags are the JVM flags Kafka's start scripts
// (kafka-run-class.sh) give a Connect worker.
var ConnectScriptJVMFlags = []string{"-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
	"-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15"}

// Connect is a private Kafka Connect worker. Its methods are safe for
// concurrent use.
type Connect struct {
	cfg  ConnectConfig
	jars ConnectJars
	java string
	dir  string
	port int
	http *http.Client

	mu        sync.Mutex
	proc      *process  // nil when not running
	started   time.Time // just before the last run's JVM was started
	closeOnce sync.Once
}

// StartConnect fetches the jars (DebeziumJars), writes the worker's
// properties and starts it, returning once its REST API lists connectors
// (the worker has joined its group and read its topics). On error nothing
// is left running or on disk, and the error carries the tail of the
// worker's log. ctx bounds the start only.
func StartConnect(ctx context.Context, cfg ConnectConfig) (*Connect, error) {
	if len(cfg.Brokers) == 0 {
		return nil, errors.New("starting kafka connect: no brokers")
	}
	if cfg.Version == "" {
		cfg.Version = DebeziumVersion()
	}
	if cfg.Connector == "" {
		cfg.Connector = "mariadb"
	}
	if cfg.Heap == "" {
		cfg.Heap = "512m"
	}
	java, err := findJava()
	if err != nil {
		return nil, err
	}
	jars, err := DebeziumJars(ctx, cfg.Version, cfg.Connector)
	if err != nil {
		return nil, err
	}
	return retryPortInUse(func() (*Connect, error) { return startConnectOnce(ctx, cfg, java, jars) })
}

func startConnectOnce(ctx context.Context, cfg ConnectConfig, java string, jars ConnectJars) (*Connect, error) {
	dir, err := os.MkdirTemp("", "devenv-connect-")
	if err != nil {
		return nil, fmt.Errorf("creating kafka connect temp dir: %w", err)
	}
	c := &Connect{cfg: cfg, jars: jars, java: java, dir: dir, http: &http.Client{Timeout: 30 * time.Second}}
	if c.port, err = freePort(); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.writeFiles(); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// WorkerProps returns the properties the worker runs with.
func (c *Connect) WorkerProps() map[string]string {
	p := maps.Clone(c.cfg.Props)
	if p == nil {
		p = map[string]string{}
	}
	p["bootstrap.servers"] = strings.Join(c.cfg.Brokers, ",")
	p["listeners"] = "http://127.0.0.1:" + strconv.Itoa(c.port)
	p["rest.advertised.host.name"] = "127.0.0.1"
	p["rest.advertised.port"] = strconv.Itoa(c.port)
	p["plugin.path"] = c.jars.Plugins
	return p
}

func (c *Connect) writeFiles() error {
	props := c.WorkerProps()
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(props)) {
		fmt.Fprintf(&b, "%s=%s\n", k, escapeProperty(props[k]))
	}
	if err := os.WriteFile(c.propsFile(), []byte(b.String()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(c.log4jConfig(), []byte(connectLog4j), 0o644)
}

// Start runs the worker again after Stop or Kill (StartConnect calls it for
// the first run) with the same properties and port, and returns once its
// REST API answers. If it fails, the worker is not running and the error
// carries the tail of its log.
func (c *Connect) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc != nil {
		return errors.New("starting kafka connect: already running")
	}
	logStart := fileSize(c.logFile())
	c.started = time.Now()
	p, err := c.spawn()
	if err != nil {
		return fmt.Errorf("starting kafka connect: %w", err)
	}
	if err := c.waitReady(ctx, p); err != nil {
		p.kill()
		b, _ := os.ReadFile(c.logFile())
		if logStart <= int64(len(b)) {
			b = b[logStart:]
		}
		if strings.Contains(string(b), "Address already in use") {
			err = fmt.Errorf("%w: %w", err, errPortInUse)
		}
		return fmt.Errorf("starting kafka connect on %s: %w\n--- tail of %s ---\n%s", c.URL(), err, c.logFile(), lastLines(string(b), 40))
	}
	c.proc = p
	return nil
}

func (c *Connect) spawn() (*process, error) {
	logFile, err := os.OpenFile(c.logFile(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening log: %w", err)
	}
	defer logFile.Close()
	flags := c.cfg.JVMFlags
	if flags == nil {
		flags = []string{"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"}
	}
	args := append([]string{"-Xmx" + c.cfg.Heap, "-Xms64m", "-Xshare:auto",
		"-Djava.awt.headless=true",
		"-Dlog4j2.configurationFile=" + c.log4jConfig(),
		"-Dkafka.logs.dir=" + c.dir,
	}, flags...)
	args = append(args, "-cp", filepath.Join(c.jars.Runtime, "*"),
		"org.apache.kafka.connect.cli.ConnectDistributed", c.propsFile())
	cmd := exec.Command(c.java, args...)
	cmd.Dir = c.dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("running %s: %w", c.java, err)
	}
	p := &process{cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// waitReady polls GET /connectors until it answers 200 (a distributed
// worker answers only once it has joined its group and read the config
// topic), the process exits, or the deadline passes.
func (c *Connect) waitReady(ctx context.Context, p *process) error {
	ctx, cancel := context.WithTimeout(ctx, connectReadyTimeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		var names []string
		lastErr = c.do(ctx, http.MethodGet, "/connectors", nil, &names)
		if lastErr == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("kafka connect exited during startup: %v", p.err)
		case <-ctx.Done():
			return fmt.Errorf("waiting for the kafka connect REST API: %w (last error: %v)", ctx.Err(), lastErr)
		case <-tick.C:
		}
	}
}

// Stop shuts the worker down gracefully (SIGTERM: it stops its tasks,
// committing their offsets, and leaves its group) and waits for it to
// exit; if ctx ends first it is killed. Stopping a worker that is not
// running does nothing.
func (c *Connect) Stop(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.proc
	if p == nil {
		return nil
	}
	c.proc = nil
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		p.kill()
		return fmt.Errorf("stopping kafka connect: %w", err)
	}
	select {
	case <-p.exited:
		return nil
	case <-ctx.Done():
		p.kill()
		return fmt.Errorf("stopping kafka connect: %w; killed it instead", ctx.Err())
	}
}

// Kill ends the worker with SIGKILL, as a crash would: offsets not yet
// committed are lost.
func (c *Connect) Kill() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc != nil {
		c.proc.kill()
		c.proc = nil
	}
}

// Pid is the worker JVM's process id, or 0 when it is not running.
func (c *Connect) Pid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return 0
	}
	return c.proc.cmd.Process.Pid
}

// Started is when the running worker's JVM was started (just before).
func (c *Connect) Started() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.started
}

// BinlogConnections counts the log lines in which the task of the Debezium
// connector with topic.prefix prefix connected to the binlog: once it has
// one more than before its start, rows committed after are captured.
func (c *Connect) BinlogConnections(prefix string) int {
	n := 0
	for _, line := range strings.Split(c.Log(), "\n") {
		if strings.Contains(line, "Connected to binlog at") && strings.Contains(line, "["+prefix+"|") {
			n++
		}
	}
	return n
}

// URL is the worker's REST address, http://127.0.0.1:PORT.
func (c *Connect) URL() string { return "http://127.0.0.1:" + strconv.Itoa(c.port) }

// Release is the Debezium release and Connect runtime the worker runs.
func (c *Connect) Release() DebeziumRelease { return c.jars.Release }

// LogTail returns the last n lines of the worker's log (every run appended).
func (c *Connect) LogTail(n int) string {
	b, err := os.ReadFile(c.logFile())
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)", c.logFile(), err)
	}
	return lastLines(string(b), n)
}

// Log returns the worker's whole log.
func (c *Connect) Log() string {
	b, err := os.ReadFile(c.logFile())
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)", c.logFile(), err)
	}
	return string(b)
}

// Close kills the worker and removes its directory. Calling it again does
// nothing.
func (c *Connect) Close() {
	c.closeOnce.Do(func() {
		c.Kill()
		_ = os.RemoveAll(c.dir)
	})
}

func (c *Connect) propsFile() string   { return filepath.Join(c.dir, "worker.properties") }
func (c *Connect) log4jConfig() string { return filepath.Join(c.dir, "log4j2.properties") }
func (c *Connect) logFile() string     { return filepath.Join(c.dir, "connect.log") }

// connectLog4j logs to stdout (the worker's log file) at INFO, with the
// clients' config dumps at WARN. Lines of a task carry Connect's
// "[connector|task-N] " and, on Debezium's own threads, Debezium's
// "[topic.prefix|context] ".
const connectLog4j = `status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %X{connector.context}%notEmpty{[%X{dbz.connectorLogicalName}|%X{dbz.connectorContext}] }%m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.config.name = org.apache.kafka.common.config.AbstractConfig
logger.config.level = WARN
logger.reflections.name = org.reflections
logger.reflections.level = ERROR
`
