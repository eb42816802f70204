package test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/route"
	"github.com/binlog-router/binlog-router/test/harness"
)

// The Java reference programs (test/javaref) run against Apache Kafka's own
// client jars, the ones devenv fetches for the broker: an independent
// implementation of the consumer and of the default partitioner to hold
// franz-go, kcat and route.PartitionFor against.

var javaRefOnce struct {
	sync.Once
	java, classpath string
	err             error
}

// javaRef compiles test/javaref/*.java with javac against the Kafka jars
// once per source content and jar directory, into the user cache
// directory, and returns java and the classpath to run the classes with.
func javaRef(t testing.TB) (java, classpath string) {
	t.Helper()
	javaRefOnce.Do(func() {
		javaRefOnce.java, javaRefOnce.classpath, javaRefOnce.err = compileJavaRef()
	})
	require.NoError(t, javaRefOnce.err)
	return javaRefOnce.java, javaRefOnce.classpath
}

func compileJavaRef() (java, classpath string, err error) {
	javac, err := exec.LookPath("javac")
	if h := os.Getenv("JAVA_HOME"); h != "" {
		javac, err = filepath.Join(h, "bin", "javac"), nil
	}
	if err != nil {
		return "", "", fmt.Errorf("javac not found (apt-get install openjdk-17-jdk-headless): %w", err)
	}
	java = filepath.Join(filepath.Dir(javac), "java")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	jars, err := devenv.KafkaJars(ctx, devenv.KafkaVersion())
	if err != nil {
		return "", "", err
	}
	sources, err := filepath.Glob(filepath.Join("javaref", "*.java"))
	if err != nil || len(sources) == 0 {
		return "", "", fmt.Errorf("no test/javaref/*.java (%v)", err)
	}
	slices.Sort(sources)
	h := sha256.New()
	fmt.Fprintln(h, jars)
	for _, s := range sources {
		b, err := os.ReadFile(s)
		if err != nil {
			return "", "", err
		}
		fmt.Fprintf(h, "%s %d\n", s, len(b))
		h.Write(b)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "binlog-router", "javaref-"+hex.EncodeToString(h.Sum(nil))[:16])
	classpath = dir + string(os.PathListSeparator) + filepath.Join(jars, "*")
	if _, err := os.Stat(filepath.Join(dir, "RefReader.class")); err == nil {
		return java, classpath, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "javaref-build-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(tmp)
	args := append([]string{"-nowarn", "-cp", filepath.Join(jars, "*"), "-d", tmp}, sources...)
	if out, err := exec.CommandContext(ctx, javac, args...).CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("javac %s: %w\n%s", strings.Join(sources, " "), err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "RefReader.class")); serr != nil {
			return "", "", err // not a concurrent build that won
		}
	}
	return java, classpath, nil
}

// runJavaRef runs one of the reference classes and returns its stdout.
func runJavaRef(t testing.TB, stdin []byte, class string, args ...string) []byte {
	t.Helper()
	java, cp := javaRef(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	jvm := []string{"-Xmx512m", "-XX:+UseSerialGC", "-Xshare:auto", "-cp", cp, class}
	cmd := exec.CommandContext(ctx, java, append(jvm, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "java %s %s:\n%s", class, strings.Join(args, " "), stderr.String())
	return out
}

// refRecord is one record as a reader saw it.
type refRecord struct {
	Topic     string      `json:"topic"`
	Partition int32       `json:"partition"`
	Offset    int64       `json:"offset"`
	Timestamp int64       `json:"timestamp"` // ms
	Key       []byte      `json:"key"`
	Value     []byte      `json:"value"`
	Headers   [][2][]byte `json:"headers"`
}

// String is the record in one comparable line (bytes quoted, nil as <nil>).
func (r refRecord) String() string {
	q := func(b []byte) string {
		if b == nil {
			return "<nil>"
		}
		return strconv.Quote(string(b))
	}
	var hs []string
	for _, h := range r.Headers {
		hs = append(hs, q(h[0])+"="+q(h[1]))
	}
	return fmt.Sprintf("%s/%d@%d ts=%d key=%s value=%s headers=[%s]", r.Topic, r.Partition, r.Offset, r.Timestamp,
		q(r.Key), q(r.Value), strings.Join(hs, " "))
}

func sortRecords(rs []refRecord) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.String()
	}
	slices.SortFunc(out, func(a, b string) int { return strings.Compare(a, b) })
	return out
}

// readJava reads the topics matching TopicRegex to their end with the Java
// consumer (read_committed).
func readJava(t testing.TB, brokers []string, topicRegex string) []refRecord {
	t.Helper()
	out := runJavaRef(t, nil, "RefReader", strings.Join(brokers, ","), topicRegex, "120000")
	var recs []refRecord
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r refRecord
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r), sc.Text())
		recs = append(recs, r)
	}
	return recs
}

// readFranz reads n records of the topics matching TopicRegex with
// franz-go (read_committed), then a second to show no more come.
func readFranz(t testing.TB, brokers []string, topicRegex string, n int) []refRecord {
	t.Helper()
	c := harness.NewConsumer(t, brokers, topicRegex)
	got := c.Read(n, 60*time.Second)
	got = append(got, c.Quiet(time.Second)...)
	recs := make([]refRecord, len(got))
	for i, r := range got {
		recs[i] = refRecord{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp.UnixMilli(),
			Key: r.Key, Value: r.Value}
		for _, h := range r.Headers {
			recs[i].Headers = append(recs[i].Headers, [2][]byte{[]byte(h.Key), h.Value})
		}
	}
	return recs
}

// kcatRecord is a line of kcat -J.
type kcatRecord struct {
	Topic     string    `json:"topic"`
	Partition int32     `json:"partition"`
	Offset    int64     `json:"offset"`
	TS        int64     `json:"ts"`
	Headers   []*string `json:"headers"` // name, value, name, value, ...
	Key       *string   `json:"key"`
	Payload   *string   `json:"payload"`
}

// readKcat reads topics to their end with kcat (librdkafka, read_committed).
func readKcat(t testing.TB, brokers, topics []string) []refRecord {
	t.Helper()
	kcat, err := exec.LookPath("kcat")
	require.NoError(t, err, "kcat not installed (apt-get install kcat)")
	var recs []refRecord
	bytesOf := func(s *string) []byte {
		if s == nil {
			return nil
		}
		return []byte(*s)
	}
	for _, topic := range topics {
		out, err := exec.Command(kcat, "-C", "-b", strings.Join(brokers, ","), "-t", topic, "-X", "isolation.level=read_committed",
			"-o", "beginning", "-e", "-q", "-J").Output()
		require.NoError(t, err, "kcat -t %s", topic)
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if line == "" {
				continue
			}
			var k kcatRecord
			require.NoError(t, json.Unmarshal([]byte(line), &k), line)
			r := refRecord{Topic: k.Topic, Partition: k.Partition, Offset: k.Offset, Timestamp: k.TS, Key: bytesOf(k.Key), Value: bytesOf(k.Payload)}
			for i := 0; i+1 < len(k.Headers); i += 2 {
				r.Headers = append(r.Headers, [2][]byte{bytesOf(k.Headers[i]), bytesOf(k.Headers[i+1])})
			}
			recs = append(recs, r)
		}
	}
	return recs
}

// kcatVerdict reads the outbox topics of types (prefix.type) of e from
// their beginning with kcat, read_committed, and checks by event id what
// it read against the rows the database committed (CheckDelivery).
func kcatVerdict(t testing.TB, e *harness.Env, types []string) harness.Verdict {
	t.Helper()
	var topics []string
	for _, typ := range types {
		topics = append(topics, e.Prefix+"."+typ)
	}
	want := harness.CommittedRows(t, e.DB)
	return harness.CheckDelivery(t, want, readerDelivered(t, readKcat(t, e.Kafka.Brokers, topics)), nil)
}

// crossCheckReaders reads every record of the test's outbox topics with
// the Java client, franz-go and kcat, all read_committed, and requires the
// three to agree on every record: topic, partition, offset, timestamp,
// key, value and headers. It runs on the Apache Kafka pass (the Java
// client is Apache Kafka's own), after the router stopped. It returns how
// many records each read.
func crossCheckReaders(t *testing.T, e *harness.Env) int {
	t.Helper()
	if !harness.OnApache() {
		return 0
	}
	start := time.Now()
	regex := e.TopicRegex()
	java := readJava(t, e.Kafka.Brokers, regex)
	franz := readFranz(t, e.Kafka.Brokers, regex, len(java))
	adm := harness.NewAdmin(t, e.Kafka.Brokers)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	details, err := adm.ListTopics(ctx)
	require.NoError(t, err)
	re := regexp.MustCompile(regex)
	var topics []string
	for _, name := range details.Names() {
		if re.MatchString(name) {
			topics = append(topics, name)
		}
	}
	kcat := readKcat(t, e.Kafka.Brokers, topics)
	require.NotEmpty(t, java, "the Java consumer read nothing")
	j, f, k := sortRecords(java), sortRecords(franz), sortRecords(kcat)
	assert.Equal(t, j, f, "the Java consumer and franz-go read the same records")
	assert.Equal(t, j, k, "the Java consumer and kcat read the same records")
	t.Logf("%s: the Java consumer, franz-go and kcat read the same %d records (read_committed) of %d topics in %s",
		harness.BrokerName(), len(java), len(topics), time.Since(start).Round(time.Millisecond))
	return len(java)
}

// TestJavaPartitionerAgrees: for 150,000 keys (empty, ASCII ids, UUIDs,
// numbers, UTF-8 in many scripts and emoji, and arbitrary bytes) and
// partition counts from 1 to 1000, route.PartitionFor and route.Murmur2
// give what Apache Kafka's Java producer gives
// (BuiltInPartitioner.partitionForKey, Utils.murmur2). Runs on the Apache
// Kafka pass, with the Kafka client jars.
func TestJavaPartitionerAgrees(t *testing.T) {
	if !harness.OnApache() {
		t.Skipf("runs on the Apache Kafka pass (%s=apache), with Apache Kafka's client jars", harness.BrokerEnv)
	}
	counts := []int{1, 2, 3, 6, 7, 12, 50, 100, 1000}
	keys := partitionerKeys(150000, rand.New(rand.NewPCG(1, 2)))
	var in bytes.Buffer
	for _, k := range keys {
		in.WriteString(base64.StdEncoding.EncodeToString(k))
		in.WriteByte('\n')
	}
	start := time.Now()
	var args []string
	for _, n := range counts {
		args = append(args, strconv.Itoa(n))
	}
	out := runJavaRef(t, in.Bytes(), "RefPartitioner", args...)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, lines, len(keys))
	mismatches := 0
	for i, line := range lines {
		f := strings.Fields(line)
		require.Len(t, f, 1+len(counts), line)
		hash, err := strconv.ParseInt(f[0], 10, 32)
		require.NoError(t, err)
		if got := int32(route.Murmur2(keys[i])); got != int32(hash) {
			mismatches++
			t.Errorf("key %q: murmur2 %d, Java %d", keys[i], got, hash)
		}
		for j, n := range counts {
			want, err := strconv.Atoi(f[1+j])
			require.NoError(t, err)
			if got := route.PartitionFor(keys[i], n); got != want {
				mismatches++
				if mismatches < 20 {
					t.Errorf("key %q, %d partitions: route.PartitionFor %d, Java %d", keys[i], n, got, want)
				}
			}
		}
	}
	assert.Zero(t, mismatches)
	utf8Keys, empty := 0, 0
	for _, k := range keys {
		if len(k) == 0 {
			empty++
		} else if utf8.Valid(k) {
			utf8Keys++
		}
	}
	t.Logf("%d keys (%d empty, %d valid UTF-8) x %d partition counts agree with Apache Kafka %s's Java partitioner (%s)",
		len(keys), empty, utf8Keys, len(counts), devenv.KafkaVersion(), time.Since(start).Round(time.Millisecond))
}

// partitionerKeys makes n keys of the shapes aggregate ids take.
func partitionerKeys(n int, rng *rand.Rand) [][]byte {
	scripts := []string{"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:",
		"éèêëàâäôöûüçñßøåæœ", "日本語中文漢字かなカナ", "한국어조선말", "русскийязык", "العربية", "עברית", "ελληνικά",
		"हिन्दी", "🚀🎉👍🏽🇫🇷❤️‍🔥", "\u0000\u0001\t\n\u007f"}
	keys := make([][]byte, 0, n)
	keys = append(keys, []byte{}, []byte{}, []byte("a"), []byte("order-1"))
	for len(keys) < n {
		switch rng.IntN(6) {
		case 0: // an id with a prefix and a number
			keys = append(keys, []byte(fmt.Sprintf("%s-%d", []string{"order", "customer", "invoice", "agg"}[rng.IntN(4)], rng.Int64N(1e12))))
		case 1: // a UUID
			b := make([]byte, 16)
			for i := range b {
				b[i] = byte(rng.IntN(256))
			}
			h := hex.EncodeToString(b)
			keys = append(keys, []byte(h[:8]+"-"+h[8:12]+"-"+h[12:16]+"-"+h[16:20]+"-"+h[20:]))
		case 2: // a decimal number
			keys = append(keys, []byte(strconv.FormatUint(rng.Uint64(), 10)))
		case 3, 4: // UTF-8 text of any length, mixing scripts
			var sb strings.Builder
			for l := rng.IntN(80); l > 0; l-- {
				s := []rune(scripts[rng.IntN(len(scripts))])
				sb.WriteRune(s[rng.IntN(len(s))])
			}
			keys = append(keys, []byte(sb.String()))
		default: // arbitrary bytes, every length up to 300 (murmur2's tail cases)
			b := make([]byte, rng.IntN(300))
			for i := range b {
				b[i] = byte(rng.IntN(256))
			}
			keys = append(keys, b)
		}
	}
	return keys
}
