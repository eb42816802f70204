package devenv

import (
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ApacheKafkaConfig configures a private Apache Kafka cluster in KRaft mode,
// every node a combined broker and controller in its own JVM. The zero value
// is one node of DefaultKafkaVersion (or $BINLOG_ROUTER_KAFKA_VERSION).
type ApacheKafkaConfig struct {
	// Nodes is the number of nodes, 1 (default) or 3. One node uses
	// replication factor 1 everywhere; three nodes use replication factor 3
	// and min.insync.replicas=2 for every topic and internal topic.
	Nodes int
	// Version is the Apache Kafka release; empty means KafkaVersion().
	Version string
	// Props are server.properties entries applied last to every node, so they
	// override the defaults (e.g. "auto.create.topics.enable": "false").
	Props map[string]string
	// NodeProps are per-node entries applied after Props, for a listener
	// layout that differs per node; NodeProps[i] is node i+1.
	NodeProps []map[string]string
	// FormatArgs are appended to `kafka-storage format`, e.g.
	// {"--feature", "transaction.version=0"} or SCRAM users
	// {"--add-scram", "SCRAM-SHA-512=[name=router,password=pw]"}.
	FormatArgs []string
	// Heap is the JVM's -Xmx; empty means 384m.
	Heap string
	// TempDir is where the cluster's directory (the nodes' log.dirs with
	// it) is made; empty means the system's temporary directory.
	TempDir string
	// JVMFlags replace the default JIT and GC flags (C1 only and the serial
	// collector, which start fast and stay light on two cores); the
	// benchmark passes {"-XX:+UseG1GC"} for the full JIT.
	JVMFlags []string
	// ExtraListeners adds named listeners on their own free port to every
	// node, e.g. {"SASL_SSL": "SASL_SSL"} (name: security protocol). Their
	// addresses are returned by ApacheKafka.ListenerAddrs.
	ExtraListeners map[string]string
	// Advertise, when set, returns the host:port node i (0 for the first)
	// advertises for the extra listener name instead of the listener's
	// own, e.g. a proxy in front of it; "" keeps the listener's own.
	Advertise func(name string, node int) string
}

// ApacheKafka is a private Apache Kafka cluster: one directory, one JVM per
// node. Node methods take a node index (0 for the first node). Its methods
// are safe for concurrent use.
type ApacheKafka struct {
	cfg       ApacheKafkaConfig
	java      string
	jars      string
	dir       string
	clusterID string
	nodes     []*kafkaNode
	closeOnce sync.Once
}

// StartApacheKafka fetches the jars (KafkaJars), formats every node's
// storage and starts the cluster, returning once every node serves metadata
// for this cluster (its cluster id is checked, so a broker that happens to
// listen on the port is never taken for ours) and all brokers are
// registered. On error nothing is left running or on disk, and the error
// carries the tail of the failing node's log. ctx bounds the start only.
func StartApacheKafka(ctx context.Context, cfg ApacheKafkaConfig) (*ApacheKafka, error) {
	if cfg.Nodes == 0 {
		cfg.Nodes = 1
	}
	if cfg.Nodes != 1 && cfg.Nodes != 3 {
		return nil, fmt.Errorf("starting apache kafka: %d nodes; use 1 or 3", cfg.Nodes)
	}
	if cfg.Version == "" {
		cfg.Version = KafkaVersion()
	}
	if cfg.Heap == "" {
		cfg.Heap = "384m"
	}
	java, err := findJava()
	if err != nil {
		return nil, err
	}
	jars, err := KafkaJars(ctx, cfg.Version)
	if err != nil {
		return nil, err
	}
	return retryPortInUse(func() (*ApacheKafka, error) { return startApacheOnce(ctx, cfg, java, jars) })
}

func startApacheOnce(ctx context.Context, cfg ApacheKafkaConfig, java, jars string) (*ApacheKafka, error) {
	dir, err := os.MkdirTemp(cfg.TempDir, "devenv-kafka-")
	if err != nil {
		return nil, fmt.Errorf("creating kafka temp dir: %w", err)
	}
	k := &ApacheKafka{cfg: cfg, java: java, jars: jars, dir: dir}
	if err := k.layout(); err != nil {
		k.Close()
		return nil, err
	}
	if err := k.format(ctx); err != nil {
		k.Close()
		return nil, err
	}
	if err := k.startAll(ctx); err != nil {
		k.Close()
		return nil, err
	}
	if err := k.waitBrokers(ctx, len(k.nodes)); err != nil {
		k.Close()
		return nil, err
	}
	return k, nil
}

// layout picks ports and writes each node's server.properties.
func (k *ApacheKafka) layout() error {
	if err := os.WriteFile(k.log4jConfig(), []byte(log4jProperties), 0o644); err != nil {
		return err
	}
	k.nodes = make([]*kafkaNode, k.cfg.Nodes)
	extra := slices.Sorted(maps.Keys(k.cfg.ExtraListeners))
	ports, err := freePorts(len(k.nodes) * (2 + len(extra)))
	if err != nil {
		return err
	}
	next := func() int { p := ports[0]; ports = ports[1:]; return p }
	var voters []string
	for i := range k.nodes {
		n := &kafkaNode{id: i + 1, dir: filepath.Join(k.dir, fmt.Sprintf("node%d", i+1)), extra: map[string]int{}}
		n.port, n.controllerPort = next(), next()
		for _, name := range extra {
			n.extra[name] = next()
		}
		if err := os.MkdirAll(n.dataDir(), 0o755); err != nil {
			return err
		}
		k.nodes[i] = n
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", n.id, n.controllerPort))
	}
	for i, n := range k.nodes {
		props := k.nodeProps(n, strings.Join(voters, ","))
		maps.Copy(props, k.cfg.Props)
		if i < len(k.cfg.NodeProps) {
			maps.Copy(props, k.cfg.NodeProps[i])
		}
		var b strings.Builder
		for _, key := range slices.Sorted(maps.Keys(props)) {
			fmt.Fprintf(&b, "%s=%s\n", key, props[key])
		}
		if err := os.WriteFile(n.propsFile(), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// nodeProps are a node's default server.properties.
func (k *ApacheKafka) nodeProps(n *kafkaNode, voters string) map[string]string {
	listeners := []string{
		fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", n.port),
		fmt.Sprintf("CONTROLLER://127.0.0.1:%d", n.controllerPort),
	}
	protocols := []string{"CONTROLLER:PLAINTEXT", "PLAINTEXT:PLAINTEXT"}
	advertised := slices.Clone(listeners)
	for _, name := range slices.Sorted(maps.Keys(k.cfg.ExtraListeners)) {
		l := fmt.Sprintf("%s://127.0.0.1:%d", name, n.extra[name])
		listeners = append(listeners, l)
		if k.cfg.Advertise != nil {
			if addr := k.cfg.Advertise(name, n.id-1); addr != "" {
				l = name + "://" + addr
			}
		}
		advertised = append(advertised, l)
		protocols = append(protocols, name+":"+k.cfg.ExtraListeners[name])
	}
	rf, isr := "1", "1"
	if len(k.nodes) == 3 {
		rf, isr = "3", "2"
	}
	p := map[string]string{
		"process.roles":                                    "broker,controller",
		"node.id":                                          strconv.Itoa(n.id),
		"listeners":                                        strings.Join(listeners, ","),
		"advertised.listeners":                             strings.Join(advertised, ","),
		"inter.broker.listener.name":                       "PLAINTEXT",
		"controller.listener.names":                        "CONTROLLER",
		"listener.security.protocol.map":                   strings.Join(protocols, ","),
		"log.dirs":                                         n.dataDir(),
		"auto.create.topics.enable":                        "true",
		"num.partitions":                                   "3",
		"default.replication.factor":                       rf,
		"min.insync.replicas":                              isr,
		"offsets.topic.replication.factor":                 rf,
		"offsets.topic.num.partitions":                     "1",
		"transaction.state.log.replication.factor":         rf,
		"transaction.state.log.min.isr":                    isr,
		"transaction.state.log.num.partitions":             "1",
		"share.coordinator.state.topic.replication.factor": rf,
		"share.coordinator.state.topic.min.isr":            isr,
		"group.initial.rebalance.delay.ms":                 "0",
		"log.cleaner.dedupe.buffer.size":                   "4194304",
		"num.network.threads":                              "2",
		"num.io.threads":                                   "2",
		"num.recovery.threads.per.data.dir":                "1",
	}
	if len(k.nodes) == 1 {
		p["controller.quorum.bootstrap.servers"] = fmt.Sprintf("127.0.0.1:%d", n.controllerPort)
	} else {
		p["controller.quorum.voters"] = voters
	}
	return p
}

// format runs kafka-storage format for every node (each in its own JVM:
// the tool calls exit).
func (k *ApacheKafka) format(ctx context.Context) error {
	id, err := k.runTool(ctx, "kafka.tools.StorageTool", "random-uuid")
	if err != nil {
		return fmt.Errorf("making a kafka cluster id: %w", err)
	}
	fields := strings.Fields(id)
	if len(fields) == 0 {
		return fmt.Errorf("making a kafka cluster id: empty output")
	}
	k.clusterID = fields[len(fields)-1]
	for _, n := range k.nodes {
		args := []string{"format", "-t", k.clusterID, "-c", n.propsFile()}
		if len(k.nodes) == 1 {
			args = append(args, "--standalone")
		}
		if _, err := k.runTool(ctx, "kafka.tools.StorageTool", append(args, k.cfg.FormatArgs...)...); err != nil {
			return fmt.Errorf("formatting kafka node %d: %w", n.id, err)
		}
	}
	return nil
}

// RunTool runs one of Kafka's command-line classes (kafka.tools.StorageTool,
// org.apache.kafka.tools.TransactionsCommand, ...) in its own JVM with the
// cluster's jars and returns its combined output.
func (k *ApacheKafka) RunTool(ctx context.Context, class string, args ...string) (string, error) {
	return k.runTool(ctx, class, args...)
}

func (k *ApacheKafka) runTool(ctx context.Context, class string, args ...string) (string, error) {
	jvm := append(toolJVMFlags(), "-Dlog4j2.configurationFile="+k.log4jConfig(), "-cp", filepath.Join(k.jars, "*"), class)
	out, err := exec.CommandContext(ctx, k.java, append(jvm, args...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s", class, strings.Join(args, " "), err, lastLines(string(out), 20))
	}
	return string(out), nil
}

// ClusterID is the id the storage was formatted with.
func (k *ApacheKafka) ClusterID() string { return k.clusterID }

// Version is the Apache Kafka release running.
func (k *ApacheKafka) Version() string { return k.cfg.Version }

// Dir is the cluster's temporary directory.
func (k *ApacheKafka) Dir() string { return k.dir }

// Jars is the directory of Kafka jars, for `java -cp 'DIR/*'`.
func (k *ApacheKafka) Jars() string { return k.jars }

// Java is the java binary that runs the cluster.
func (k *ApacheKafka) Java() string { return k.java }

// Brokers returns every node's PLAINTEXT address, node 1 first.
func (k *ApacheKafka) Brokers() []string {
	out := make([]string, len(k.nodes))
	for i, n := range k.nodes {
		out[i] = n.addr()
	}
	return out
}

// ListenerAddrs returns every node's address on the named extra listener.
func (k *ApacheKafka) ListenerAddrs(name string) []string {
	var out []string
	for _, n := range k.nodes {
		if p, ok := n.extra[name]; ok {
			out = append(out, net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		}
	}
	return out
}

// NodeID is node i's node.id (i+1).
func (k *ApacheKafka) NodeID(i int) int32 { return int32(k.nodes[i].id) }

// NodeIndex maps a node.id back to its index, or -1.
func (k *ApacheKafka) NodeIndex(id int32) int {
	for i, n := range k.nodes {
		if int32(n.id) == id {
			return i
		}
	}
	return -1
}

// DataDir is node i's log directory (log.dirs): one directory per
// partition, and the log cleaner's cleaner-offset-checkpoint.
func (k *ApacheKafka) DataDir(i int) string { return k.nodes[i].dataDir() }

// LogTail returns the last n lines of node i's log (every run appended).
func (k *ApacheKafka) LogTail(i, n int) string {
	b, err := os.ReadFile(k.nodes[i].logFile())
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)", k.nodes[i].logFile(), err)
	}
	return lastLines(string(b), n)
}

// Close kills every node (SIGKILL: the data is about to be deleted) and
// removes the cluster's directory. Calling it again does nothing.
func (k *ApacheKafka) Close() {
	k.closeOnce.Do(func() {
		for _, n := range k.nodes {
			if n != nil {
				n.kill()
			}
		}
		_ = os.RemoveAll(k.dir)
	})
}

func (k *ApacheKafka) log4jConfig() string { return filepath.Join(k.dir, "log4j2.properties") }

// log4jProperties logs to stdout (the node's log file) at INFO, with the
// chattiest loggers at WARN.
const log4jProperties = `status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.config.name = org.apache.kafka.common.config.AbstractConfig
logger.config.level = WARN
`

// findJava returns $JAVA_HOME/bin/java or java from PATH.
func findJava() (string, error) {
	if h := os.Getenv("JAVA_HOME"); h != "" {
		p := filepath.Join(h, "bin", "java")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath("java")
	if err != nil {
		return "", fmt.Errorf("looking for java: %w", ErrJavaNotInstalled)
	}
	return p, nil
}

// toolJVMFlags suit a short-lived tool on a small machine: the C1 compiler
// only, the serial collector, a small heap.
func toolJVMFlags() []string {
	return []string{"-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto"}
}
