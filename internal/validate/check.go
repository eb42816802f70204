package validate

import (
	"fmt"
	"strings"
)

// Status is the outcome of one check.
type Status string

// The statuses, from good to bad.
const (
	OK   Status = "OK"   // the requirement is met
	Warn Status = "WARN" // works, but a recommendation is not followed
	Fail Status = "FAIL" // the router cannot work correctly until this is fixed
)

// Cause is what a failed check would stop `binlog-router run` with, so
// that validate can exit with the code run would exit with.
type Cause uint8

// The causes of a Fail.
const (
	CauseError  Cause = iota // any other error (connection, privileges, Kafka, the checkpoint, a table's columns)
	CauseConfig              // configuration: an outbox table that does not exist, a --start the server cannot serve, a server setting the router requires
	CausePurged              // the binlog after the stored checkpoint was purged
)

// Check is the outcome of one requirement.
type Check struct {
	Name   string // what was checked, e.g. "binlog_format" or "outbox table shop.outbox"
	Status Status
	Detail string // what was found
	Fix    string // what to do; set for every Warn and Fail
	Cause  Cause  // of a Fail; CauseError otherwise
}

// String formats c as one line:
//
//	OK   <name>: <detail>
//	FAIL <name>: <detail> — fix: <fix>
func (c Check) String() string {
	s := fmt.Sprintf("%-4s %s: %s", c.Status, c.Name, c.Detail)
	if c.Status != OK && c.Fix != "" {
		s += " — fix: " + c.Fix
	}
	return s
}

// Worst returns the cause of the failed checks that `run` would stop with
// first: CauseConfig before CausePurged before CauseError, as run checks
// its configuration and the server's settings before it reads the binlog.
// failed is false when no check failed.
func Worst(checks []Check) (cause Cause, failed bool) {
	rank := map[Cause]int{CauseError: 1, CausePurged: 2, CauseConfig: 3}
	for _, c := range checks {
		if c.Status == Fail && (!failed || rank[c.Cause] > rank[cause]) {
			cause, failed = c.Cause, true
		}
	}
	return cause, failed
}

// Summary counts the checks by status, e.g. "14 checks: 12 OK, 1 WARN,
// 1 FAIL".
func Summary(checks []Check) string {
	n := map[Status]int{}
	for _, c := range checks {
		n[c.Status]++
	}
	return fmt.Sprintf("%d checks: %d OK, %d WARN, %d FAIL", len(checks), n[OK], n[Warn], n[Fail])
}

func ok(name, detail string, args ...any) Check {
	return Check{Name: name, Status: OK, Detail: fmt.Sprintf(detail, args...)}
}

func warn(name, fix, detail string, args ...any) Check {
	return Check{Name: name, Status: Warn, Detail: fmt.Sprintf(detail, args...), Fix: fix}
}

func fail(name, fix, detail string, args ...any) Check {
	return Check{Name: name, Status: Fail, Detail: fmt.Sprintf(detail, args...), Fix: fix}
}

// because sets the cause of a failed check.
func because(cause Cause, c Check) Check {
	if c.Status == Fail {
		c.Cause = cause
	}
	return c
}

// on reports whether a server variable's value means on.
func on(v string) bool {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "ON", "1", "TRUE", "YES":
		return true
	}
	return false
}
