package main

import (
	"fmt"
	"slices"
	"strings"
)

// The stages of a run, in the order they run. The backlog is loaded when
// any of raw, catchup or profile is selected.
const (
	stageRaw     = "raw"     // raw decode and raw produce limits
	stageCatchup = "catchup" // the router binary catching up the backlog, both delivery modes
	stageLive    = "live"    // open-loop inserts, end-to-end latency
	stageBroker  = "broker"  // the broker alone at the live rates: bare franz-go producers
	stageStress  = "stress"  // memory with 1 MB payloads and one huge transaction
	// stageDebezium runs Debezium and the router side by side on an Apache
	// Kafka node: catch-up of the backlog, and live latency when live is
	// selected too.
	stageDebezium = "debezium"
)

var stageNames = []string{stageRaw, stageCatchup, stageDebezium, stageLive, stageBroker, stageStress}

// stageSet is the set of selected stages, a flag.Value.
type stageSet map[string]bool

// allStages is the default selection: every stage but broker, which
// runs only when named.
func allStages() stageSet {
	s := stageSet{}
	for _, n := range stageNames {
		s[n] = n != stageBroker
	}
	return s
}

func (s *stageSet) String() string {
	var on []string
	for _, n := range stageNames {
		if (*s)[n] {
			on = append(on, n)
		}
	}
	return strings.Join(on, ",")
}

func (s *stageSet) Set(v string) error {
	next := stageSet{}
	for _, n := range strings.Split(v, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if !slices.Contains(stageNames, n) {
			return fmt.Errorf("unknown stage %q: use %s", n, strings.Join(stageNames, ","))
		}
		next[n] = true
	}
	*s = next
	return nil
}

func (s stageSet) has(name string) bool { return s[name] }

// needsBacklog reports whether the catch-up backlog must be loaded.
func (s stageSet) needsBacklog() bool { return s[stageRaw] || s[stageCatchup] || s[stageDebezium] }
