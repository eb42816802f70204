package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"
)

// setting is what a run's figures belong to: the code the suites were
// built from, the broker and the variant. Runs of different settings are
// never counted together.
type setting struct {
	// Code fingerprints the tracked Go sources and modules (a hash of
	// their blob ids), "+dirty" when they have changes: a commit that
	// changes only documents keeps the runs counted.
	Code   string
	Broker string
	Faults string
}

func (s setting) String() string {
	return fmt.Sprintf("%s (FAULTS=%s), code %s", s.Broker, s.Faults, s.Code)
}

// codeFiles are the files whose content a run depends on.
var codeFiles = []string{"*.go", "go.mod", "go.sum", "Makefile"}

// currentSetting is the setting of the runs this process starts.
func currentSetting() setting {
	code := "unknown"
	if out, err := exec.Command("git", append([]string{"ls-files", "-s", "--"}, codeFiles...)...).Output(); err == nil {
		code = fmt.Sprintf("%x", sha256.Sum256(out))[:12]
		st, err := exec.Command("git", append([]string{"status", "--porcelain", "--untracked-files=no", "--"}, codeFiles...)...).Output()
		if err == nil && len(st) > 0 {
			code += "+dirty"
		}
	}
	return setting{Code: code, Broker: brokerName(), Faults: orDefault(os.Getenv("FAULTS"), "short")}
}

// stored is one line of a -results file: one run of one suite.
type stored struct {
	Setting setting
	Suite   string
	Result  result
	At      time.Time
}

func appendResult(file string, s stored) error {
	s.At = time.Now().UTC()
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("appending to %s: %w", file, err)
	}
	return f.Close()
}

// readResults returns the runs of file by setting, in the order the
// settings first appear.
func readResults(file string) ([]setting, map[setting][]stored, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var order []setting
	by := map[setting][]stored{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		var s stored
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return nil, nil, fmt.Errorf("%s line %d: %w", file, n, err)
		}
		if _, ok := by[s.Setting]; !ok {
			order = append(order, s.Setting)
		}
		by[s.Setting] = append(by[s.Setting], s)
	}
	return order, by, sc.Err()
}

// printResults prints one table per setting of file, the current
// setting's last.
func printResults(file string) error {
	if file == "" {
		return fmt.Errorf("-table needs -results FILE")
	}
	order, by, err := readResults(file)
	if err != nil {
		return err
	}
	cur := currentSetting()
	if i := slices.Index(order, cur); i >= 0 {
		order = append(slices.Delete(order, i, i+1), cur)
	}
	for i, set := range order {
		runs := by[set]
		rows := map[string]*row{}
		var suites []string
		first, last := runs[0].At, runs[0].At
		for _, r := range runs {
			if rows[r.Suite] == nil {
				rows[r.Suite] = &row{Suite: r.Suite}
				suites = append(suites, r.Suite)
			}
			rows[r.Suite].add(r.Result)
			first, last = minTime(first, r.At), maxTime(last, r.At)
		}
		if i > 0 {
			fmt.Println()
		}
		fmt.Printf("Fault suites on %s, all runs in %s (%d runs from %s to %s)\n\n",
			set, file, len(runs), first.Format(time.DateTime), last.Format(time.DateTime))
		writeTable(os.Stdout, sortedRows(rows, suites))
	}
	return nil
}

// sortedRows is the rows of suites, in that order.
func sortedRows(rows map[string]*row, suites []string) []*row {
	var out []*row
	for _, s := range suites {
		if r := rows[s]; r != nil {
			out = append(out, r)
		}
	}
	return out
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
