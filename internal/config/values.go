package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// listFlag is a repeatable, comma-separable string list. The first use on
// the command line replaces the default.
type listFlag struct {
	dst *[]string
	set bool
}

func (l *listFlag) String() string {
	if l.dst == nil {
		return ""
	}
	return strings.Join(*l.dst, ",")
}

func (l *listFlag) Set(v string) error {
	if !l.set {
		*l.dst, l.set = nil, true
	}
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l.dst = append(*l.dst, p)
		}
	}
	return nil
}

// OptionalString is a string flag that knows whether it was given, so
// that "" can be a value.
type OptionalString struct {
	Value string
	Given bool
}

func (o *OptionalString) String() string { return o.Value }

// Set implements flag.Value.
func (o *OptionalString) Set(v string) error {
	o.Value, o.Given = v, true
	return nil
}

// OptionalTime is an RFC3339 time flag that knows whether it was given.
type OptionalTime struct {
	Time  time.Time
	Given bool
}

func (o *OptionalTime) String() string {
	if !o.Given {
		return ""
	}
	return o.Time.Format(time.RFC3339Nano)
}

// Set implements flag.Value.
func (o *OptionalTime) Set(v string) error {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return fmt.Errorf("want RFC3339, e.g. 2024-05-01T12:00:00Z: %w", err)
	}
	o.Time, o.Given = t, true
	return nil
}

// Age is a duration flag that also takes days ("7d", "1d12h") and knows
// whether it was given.
type Age struct {
	D     time.Duration
	Given bool
}

func (a *Age) String() string {
	if !a.Given {
		return ""
	}
	if a.D%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", a.D/(24*time.Hour))
	}
	return a.D.String()
}

// Set implements flag.Value.
func (a *Age) Set(v string) error {
	d, err := ParseAge(v)
	if err != nil {
		return err
	}
	a.D, a.Given = d, true
	return nil
}

// ParseAge parses a duration of time.ParseDuration, optionally preceded
// by a whole number of days: "7d", "36h", "1d12h", "90m".
func ParseAge(v string) (time.Duration, error) {
	s := strings.TrimSpace(v)
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.ParseUint(s[:i], 10, 16)
		if err != nil {
			return 0, fmt.Errorf("%q: want days and/or a duration, e.g. 7d, 36h, 1d12h", v)
		}
		days, s = time.Duration(n)*24*time.Hour, s[i+1:]
		if s == "" {
			return days, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q: want days and/or a duration, e.g. 7d, 36h, 1d12h", v)
	}
	return days + d, nil
}
