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

// Check is the outcome of one requirement.
type Check struct {
	Name   string // what was checked, e.g. "binlog_format" or "outbox table shop.outbox"
	Status Status
	Detail string // what was found
	Fix    string // what to do; set for every Warn and Fail
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

// Failed reports whether any check failed.
func Failed(checks []Check) bool {
	for _, c := range checks {
		if c.Status == Fail {
			return true
		}
	}
	return false
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

// on reports whether a server variable's value means on.
func on(v string) bool {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "ON", "1", "TRUE", "YES":
		return true
	}
	return false
}
