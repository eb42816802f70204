package config

import (
	"fmt"
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
