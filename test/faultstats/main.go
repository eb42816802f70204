// Command faultstats runs each fault suite of the test package several
// times and prints one markdown table of what the runs found: `make
// test-faults N=20`.
//
// The suites are the tests of -pkg whose names match -run (as `go test
// -list` finds them): by default every name with Fault, Crash, Failover,
// HA, Rolling or Cluster in it. Each suite runs -n times, one run after
// another, each run its own
//
//	go test -json -race -count=1 -p 1 -timeout T -run '^Suite$' PKG
//
// with the environment inherited: FAULTS=long picks the long variants,
// BINLOG_ROUTER_TEST_BROKER=apache the Apache Kafka pass. A suite that
// needs Apache Kafka skips on kfake; one that injects faults into kfake
// runs on kfake in both passes.
//
// A run's figures come from go test's verdict (pass, fail, skip; a run
// that dies without one is a failure) and from the line each suite's
// delivery check logs as the test ends (test/harness/faultcheck.go):
//
//	faultstats: suite=TestX checks=3 lost=0 duplicated=0 allowed=0 recovery=12.3s
//
// Per suite the table gives the runs, the failed and skipped ones, the
// lost and the duplicated records summed over the runs (each run counts
// its worst check: the same rows read by three readers are one check
// each), the repeats the suite allows (at-least-once), the longest time
// routing took to resume after a fault, and the longest run. "-" marks a
// figure no run reported. Every run's output is kept under -logs. The
// exit status is 1 when a run failed.
//
// The runs go in rounds (every suite once, then again), so a loop cut
// short still covers every suite about evenly. With -results FILE each
// run is also appended to FILE as a JSON line naming the code (a
// fingerprint of the Go sources: documents may change), the broker and
// the variant, and the table counts every run FILE holds for the same
// code, broker and variant: N=20 can be gathered over several
// invocations (make test-faults N=5 RESULTS=faults.jsonl, four times).
// -table prints that table without running anything.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

func main() {
	n := flag.Int("n", 1, "runs of each suite")
	run := flag.String("run", "Fault|Crash|Failover|HA|Rolling|Cluster", "regular expression selecting the suites (go test -run syntax, top-level names)")
	pkg := flag.String("pkg", "./test/", "the package holding the suites")
	race := flag.Bool("race", true, "build the tests with the race detector, as make test does")
	timeout := flag.Duration("timeout", 30*time.Minute, "go test -timeout of one run")
	logs := flag.String("logs", "", "directory for every run's output (default: a new one under the temp dir)")
	results := flag.String("results", "", "append each run to this JSON-lines file, and count every run it holds for this commit, broker and variant")
	tableOnly := flag.Bool("table", false, "print the table of -results without running anything")
	flag.Parse()
	if *n < 1 {
		fatalf("-n %d: run each suite at least once", *n)
	}
	var err error
	if *tableOnly {
		err = printResults(*results)
	} else {
		err = faultstats(*n, *run, *pkg, *race, *timeout, *logs, *results)
	}
	if err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "faultstats: "+format+"\n", args...)
	os.Exit(2)
}

func faultstats(n int, pattern, pkg string, race bool, timeout time.Duration, logs, results string) error {
	if logs == "" {
		dir, err := os.MkdirTemp("", "faultstats-")
		if err != nil {
			return err
		}
		logs = dir
	} else if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	suites, err := listSuites(pkg, pattern, race)
	if err != nil {
		return err
	}
	if len(suites) == 0 {
		return fmt.Errorf("no test in %s matches %q", pkg, pattern)
	}
	at := currentSetting()
	fmt.Fprintf(os.Stderr, "faultstats: %d suites x %d runs on %s: %s\n", len(suites), n, at, strings.Join(suites, " "))
	began := time.Now()
	rows := map[string]*row{}
	failed := false
	for i := 1; i <= n; i++ {
		for _, suite := range suites {
			res, err := runOnce(suite, pkg, race, timeout, filepath.Join(logs, fmt.Sprintf("%s-%02d.log", suite, i)))
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "faultstats: %s run %d/%d: %s\n", suite, i, n, res)
			if results != "" {
				if err := appendResult(results, stored{Setting: at, Suite: suite, Result: res}); err != nil {
					return err
				}
			}
			if rows[suite] == nil {
				rows[suite] = &row{Suite: suite}
			}
			rows[suite].add(res)
			failed = failed || res.Status == fail || res.Status == none
		}
	}
	fmt.Printf("Fault suites on %s, %d run(s) each, %s; every run's output in %s\n\n", at, n, time.Since(began).Round(time.Second), logs)
	writeTable(os.Stdout, sortedRows(rows, suites))
	if results != "" {
		fmt.Println()
		if err := printResults(results); err != nil {
			return err
		}
	}
	if failed {
		os.Exit(1)
	}
	return nil
}

// brokerName names the Kafka the suites ran on, as the test package picks it.
func brokerName() string {
	if os.Getenv("BINLOG_ROUTER_TEST_BROKER") != "apache" {
		return "kfake"
	}
	return "Apache Kafka " + orDefault(os.Getenv("BINLOG_ROUTER_KAFKA_VERSION"), "(default version)")
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// listSuites is the top-level tests of pkg matching pattern.
func listSuites(pkg, pattern string, race bool) ([]string, error) {
	args := []string{"test", "-list", pattern}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, pkg)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("listing the suites (go %s %s): %w\n%s%s", strings.Join(args, " "), pkg, err, out, stderr.Bytes())
	}
	var suites []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "Test") {
			suites = append(suites, strings.TrimSpace(line))
		}
	}
	return suites, nil
}

// runOnce runs suite once, keeps its output in logFile and returns what
// it found.
func runOnce(suite, pkg string, race bool, timeout time.Duration, logFile string) (result, error) {
	args := []string{"test", "-json", "-count=1", "-p", "1", "-timeout", timeout.String(), "-run", "^" + suite + "$"}
	if race {
		args = append(args, "-race")
	}
	args = append(args, pkg)
	f, err := os.Create(logFile)
	if err != nil {
		return result{}, err
	}
	defer f.Close()
	cmd := exec.Command("go", args...)
	var out bytes.Buffer
	cmd.Stdout = io.MultiWriter(&out, f)
	cmd.Stderr = f
	began := time.Now()
	runErr := cmd.Run()
	var exit *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exit) {
		return result{}, fmt.Errorf("running go %s: %w", strings.Join(args, " "), runErr)
	}
	res := parseRun(&out, suite)
	res.Took = time.Since(began)
	if runErr != nil && res.Status != fail {
		res.Status = fail // a build error, a panic or a timeout before the test's verdict
		res.Note = "go test: " + runErr.Error()
	}
	return res, nil
}

type status string

const (
	pass status = "PASS"
	fail status = "FAIL"
	skip status = "SKIP"
	none status = "no verdict"
)

// result is one run of one suite.
type result struct {
	Status status
	// Checks is the number of delivery checks its faultstats lines
	// report; Lost, Duplicated and Allowed mean something only above 0.
	Checks                    int
	Lost, Duplicated, Allowed int
	Recovery                  time.Duration // 0 when none was timed
	Took                      time.Duration
	Note                      string
}

func (r result) String() string {
	s := fmt.Sprintf("%s in %s", r.Status, r.Took.Round(100*time.Millisecond))
	if r.Checks > 0 {
		s += fmt.Sprintf(", lost %d, duplicated %d, allowed repeats %d", r.Lost, r.Duplicated, r.Allowed)
	}
	if r.Recovery > 0 {
		s += ", recovery " + durOrDash(r.Recovery)
	}
	if r.Note != "" {
		s += " (" + r.Note + ")"
	}
	return s
}

// event is one line of go test -json (test2json).
type event struct {
	Action string
	Test   string
	Output string
}

var statsLine = regexp.MustCompile(`faultstats: suite=(\S+) checks=(\d+) lost=(\d+) duplicated=(\d+) allowed=(\d+) recovery=(\S+)`)

// parseRun reads go test -json output: suite's verdict and the worst of
// the faultstats lines of suite and its subtests.
func parseRun(r io.Reader, suite string) result {
	res := result{Status: none}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev event
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue // go's own messages (a build failure) are not JSON
		}
		if ev.Test == suite {
			switch ev.Action {
			case "pass":
				res.Status = pass
			case "fail":
				res.Status = fail
			case "skip":
				res.Status = skip
			}
		}
		if ev.Action != "output" {
			continue
		}
		m := statsLine.FindStringSubmatch(ev.Output)
		if m == nil || (m[1] != suite && !strings.HasPrefix(m[1], suite+"/")) {
			continue
		}
		res.Checks += atoi(m[2])
		res.Lost = max(res.Lost, atoi(m[3]))
		res.Duplicated = max(res.Duplicated, atoi(m[4]))
		res.Allowed = max(res.Allowed, atoi(m[5]))
		if d, err := time.ParseDuration(m[6]); err == nil {
			res.Recovery = max(res.Recovery, d)
		}
	}
	return res
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// row is one suite's line of the table.
type row struct {
	Suite                     string
	Runs, Failures, Skipped   int
	Checked                   int // runs whose delivery was checked
	Lost, Duplicated, Allowed int
	WorstRecovery, LongestRun time.Duration
}

func (r *row) add(res result) {
	r.Runs++
	switch res.Status {
	case fail, none:
		r.Failures++
	case skip:
		r.Skipped++
	}
	if res.Checks > 0 {
		r.Checked++
		r.Lost += res.Lost
		r.Duplicated += res.Duplicated
		r.Allowed += res.Allowed
	}
	r.WorstRecovery = max(r.WorstRecovery, res.Recovery)
	if res.Status != skip {
		r.LongestRun = max(r.LongestRun, res.Took)
	}
}

func writeTable(w io.Writer, rows []*row) {
	fmt.Fprintln(w, "| suite | runs | failures | skipped | lost | duplicated | allowed repeats | worst recovery | longest run |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		lost, dup, allowed := "-", "-", "-"
		if r.Checked > 0 {
			lost, dup, allowed = strconv.Itoa(r.Lost), strconv.Itoa(r.Duplicated), strconv.Itoa(r.Allowed)
		}
		longest := "-"
		if r.Skipped < r.Runs {
			longest = r.LongestRun.Round(time.Second).String()
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %s | %s | %s | %s | %s |\n",
			r.Suite, r.Runs, r.Failures, r.Skipped, lost, dup, allowed, durOrDash(r.WorstRecovery), longest)
	}
}

func durOrDash(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}
