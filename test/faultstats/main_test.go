package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestParseRun(t *testing.T) {
	line := func(action, test, output string) string {
		b, _ := json.Marshal(event{Action: action, Test: test, Output: output})
		return string(b) + "\n"
	}
	stats := "    faultcheck.go:280: faultstats: suite=%s checks=%s lost=%s duplicated=%s allowed=%s recovery=%s\n"
	for _, tc := range []struct {
		name string
		out  string
		want result
	}{
		{"pass with figures", line("run", "TestX", "") +
			line("output", "TestX", fmt.Sprintf(stats, "TestX", "3", "0", "0", "0", "12.3s")) +
			line("pass", "TestX", ""),
			result{Status: pass, Checks: 3, Recovery: 12300 * time.Millisecond}},
		{"the worst of several checks and subtests", line("output", "TestX", fmt.Sprintf(stats, "TestX", "1", "2", "0", "5", "-")) +
			line("output", "TestX/sub", fmt.Sprintf(stats, "TestX/sub", "1", "0", "7", "0", "3s")) +
			line("fail", "TestX/sub", "") + line("fail", "TestX", ""),
			result{Status: fail, Checks: 2, Lost: 2, Duplicated: 7, Allowed: 5, Recovery: 3 * time.Second}},
		{"another test's line is not this suite's", line("output", "TestXY", fmt.Sprintf(stats, "TestXY", "1", "9", "9", "9", "9s")) +
			line("pass", "TestX", ""),
			result{Status: pass}},
		{"skipped", line("output", "TestX", "    broker.go:111: runs on the Apache Kafka pass\n") + line("skip", "TestX", ""),
			result{Status: skip}},
		{"no verdict (a panic or a timeout)", "FAIL\tgithub.com/x/test 0.1s\n" + line("output", "TestX", "panic: boom\n"),
			result{Status: none}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseRun(strings.NewReader(tc.out), "TestX"); got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestTable(t *testing.T) {
	var r row
	r.Suite = "TestX"
	r.add(result{Status: pass, Checks: 1, Lost: 0, Duplicated: 1, Recovery: 4 * time.Second, Took: 61 * time.Second})
	r.add(result{Status: fail, Checks: 2, Lost: 2, Duplicated: 0, Recovery: 9500 * time.Millisecond, Took: 50 * time.Second})
	r.add(result{Status: none, Took: 3 * time.Second})
	s := row{Suite: "TestSkipped"}
	s.add(result{Status: skip})
	h := row{Suite: "TestTimedOnly"}
	h.add(result{Status: pass, Recovery: 6 * time.Second, Took: 30 * time.Second})
	var b bytes.Buffer
	writeTable(&b, []*row{&r, &s, &h})
	want := "| suite | runs | failures | skipped | lost | duplicated | allowed repeats | worst recovery | longest run |\n" +
		"|---|---:|---:|---:|---:|---:|---:|---:|---:|\n" +
		"| TestX | 3 | 2 | 0 | 2 | 1 | 0 | 9.5s | 1m1s |\n" +
		"| TestSkipped | 1 | 0 | 1 | - | - | - | - | - |\n" +
		"| TestTimedOnly | 1 | 0 | 0 | - | - | - | 6.0s | 30s |\n"
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestResultsAccumulate: runs appended over several invocations are
// counted together per setting, and never with another setting's.
func TestResultsAccumulate(t *testing.T) {
	file := t.TempDir() + "/runs.jsonl"
	a := setting{Code: "abc", Broker: "Apache Kafka 4.4.0", Faults: "short"}
	b := setting{Code: "def", Broker: "Apache Kafka 4.4.0", Faults: "short"}
	for _, s := range []stored{
		{Setting: a, Suite: "TestX", Result: result{Status: pass, Checks: 1, Recovery: 2 * time.Second}},
		{Setting: b, Suite: "TestX", Result: result{Status: fail, Checks: 1, Duplicated: 3}},
		{Setting: a, Suite: "TestX", Result: result{Status: pass, Checks: 1, Recovery: 5 * time.Second}},
		{Setting: a, Suite: "TestY", Result: result{Status: fail, Checks: 1, Lost: 1}},
	} {
		if err := appendResult(file, s); err != nil {
			t.Fatal(err)
		}
	}
	order, by, err := readResults(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(order) != 2 || order[0] != a || order[1] != b {
		t.Fatalf("settings %v, want [%v %v]", order, a, b)
	}
	rows := map[string]*row{}
	for _, s := range by[a] {
		if rows[s.Suite] == nil {
			rows[s.Suite] = &row{Suite: s.Suite}
		}
		rows[s.Suite].add(s.Result)
	}
	x, y := rows["TestX"], rows["TestY"]
	if x.Runs != 2 || x.Failures != 0 || x.Duplicated != 0 || x.WorstRecovery != 5*time.Second {
		t.Errorf("TestX at abc: %+v, want 2 runs, 0 failures, 0 duplicated (the failure is def's), worst recovery 5s", *x)
	}
	if y.Runs != 1 || y.Failures != 1 || y.Lost != 1 {
		t.Errorf("TestY at abc: %+v, want 1 failed run with 1 lost", *y)
	}
}
