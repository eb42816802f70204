package test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/test/harness"
)

// aclGrant is one ACL binding of the router's principal: one operation on
// one resource, as docs/grants.md lists them.
type aclGrant struct {
	op       kadm.ACLOperation
	kind     string // "topic", "group", "transactional-id", "cluster"
	name     string
	prefixed bool
}

func (g aclGrant) String() string {
	s := fmt.Sprintf("%s on %s %s", g.op, g.kind, g.name)
	if g.prefixed {
		s += "*"
	}
	return s
}

func (g aclGrant) builder(principal string) *kadm.ACLBuilder {
	b := kadm.NewACLs().Allow(principal).AllowHosts().Operations(g.op)
	switch g.kind {
	case "topic":
		b.Topics(g.name)
	case "group":
		b.Groups(g.name)
	case "transactional-id":
		b.TransactionalIDs(g.name)
	case "cluster":
		b.Clusters()
	}
	if g.prefixed {
		b.ResourcePatternType(kadm.ACLPatternPrefixed)
	} else {
		b.ResourcePatternType(kadm.ACLPatternLiteral)
	}
	return b
}

// aclWorld is one set of router names and topics, its grants, and the
// scenarios that use them.
type aclWorld struct {
	t        *testing.T
	e        *harness.Env
	s        *securedKafka
	adm      *kadm.Client
	name     string // --name
	prefix   string // outbox topics are prefix + ".{event_type}"
	cpTopic  string
	dlqTopic string
	auth     []string // the router's SASL_SSL flags
}

// readmeGrants are the ACLs docs/grants.md lists for the router's principal,
// for this world's names.
func (w *aclWorld) readmeGrants() []aclGrant {
	return []aclGrant{
		{kadm.OpWrite, "topic", w.prefix + ".", true},
		{kadm.OpCreate, "topic", w.prefix + ".", true},
		{kadm.OpDescribeConfigs, "topic", w.prefix + ".", true},
		{kadm.OpRead, "topic", w.cpTopic, false},
		{kadm.OpWrite, "topic", w.cpTopic, false},
		{kadm.OpCreate, "topic", w.cpTopic, false},
		{kadm.OpDescribeConfigs, "topic", w.cpTopic, false},
		{kadm.OpWrite, "topic", w.dlqTopic, false},
		{kadm.OpCreate, "topic", w.dlqTopic, false},
		{kadm.OpDescribeConfigs, "topic", w.dlqTopic, false},
		{kadm.OpWrite, "transactional-id", "binlog-router-" + w.name, false},
		{kadm.OpRead, "group", "binlog-router-" + w.name, false},
		{kadm.OpWrite, "transactional-id", "binlog-router-replay-" + w.name + "-", true},
		{kadm.OpWrite, "transactional-id", "binlog-router-validate-", true},
		{kadm.OpWrite, "transactional-id", "binlog-router-" + w.name + "#2", false},
	}
}

func (w *aclWorld) setGrants(grants []aclGrant, create bool) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, g := range grants {
		var err error
		if create {
			var rs kadm.CreateACLsResults
			rs, err = w.adm.CreateACLs(ctx, g.builder("User:router"))
			for _, r := range rs {
				if err == nil {
					err = r.Err
				}
			}
		} else {
			var rs kadm.DeleteACLsResults
			rs, err = w.adm.DeleteACLs(ctx, g.builder("User:router"))
			for _, r := range rs {
				if err == nil {
					err = r.Err
				}
			}
		}
		require.NoError(w.t, err, "%v %s", create, g)
	}
}

// run starts the router with the world's flags plus extra and returns it.
func (w *aclWorld) routerArgs(start string, extra ...string) []string {
	args := []string{
		"--mysql-addr", w.e.Maria.Addr(), "--mysql-user", "root",
		"--kafka-brokers", strings.Join(w.s.secured, ","),
		"--outbox-table", w.e.DBName + ".outbox",
		"--topic-template", w.prefix + ".{event_type}",
		"--checkpoint-topic", w.cpTopic,
		"--dead-letter-topic", w.dlqTopic,
		"--name", w.name, "--log-format", "json",
		"--server-id", fmt.Sprint(3000 + time.Now().UnixNano()%10000),
		"--start", "gtid:" + start,
	}
	return append(append(args, w.auth...), extra...)
}

// The scenarios of the ACL test: each is one command of the router run
// against a world's names.
const (
	scRun     = "run" // exactly-once: a row routed
	scALO     = "run --delivery at-least-once"
	scHA      = "run --ha"
	scDLQ     = "run --on-invalid dead-letter" // a bad row dead-lettered, a good one routed
	scShow    = "checkpoint show"
	scSet     = "checkpoint set"
	scReset   = "checkpoint reset"
	scReplay  = "replay"
	scVal     = "validate"
	aclWait   = 90 * time.Second // how long a refused command may take to stop
	aclMaxLog = 25               // log lines a refused command may write
)

var allScenarios = []string{scRun, scALO, scHA, scDLQ, scShow, scSet, scReset, scReplay, scVal}

// aclOutcome is what one scenario did.
type aclOutcome struct {
	ok    bool
	code  int
	log   string
	took  time.Duration
	lines int
}

// scenario runs one scenario and reports whether it did its job.
func (w *aclWorld) scenario(sc string) aclOutcome {
	w.t.Helper()
	start := w.e.GTIDPos()
	good := harness.NewEvent("acl-good", "ACLRouted", `{"ok":true}`)
	switch sc {
	case scRun, scALO, scHA, scDLQ:
		var extra []string
		switch sc {
		case scALO:
			extra = []string{"--delivery", "at-least-once"}
		case scHA:
			extra = []string{"--ha", "--ha-session-timeout", "6s"}
		case scDLQ:
			extra = []string{"--on-invalid", "dead-letter"}
			bad := harness.NewEvent("bad", "ACLRouted", `{}`)
			bad.ID = "bad-" + bad.ID[:32] // not a UUID: a row error
			w.e.InsertTx(bad)
		}
		w.e.InsertTx(good)
		return w.runRouter(start, good.ID, sc == scDLQ, extra...)
	case scShow:
		return w.cli("checkpoint", "show", "--name", w.name, "--kafka-brokers", strings.Join(w.s.secured, ","), "--checkpoint-topic", w.cpTopic)
	case scSet, scReset:
		args := []string{"checkpoint", strings.TrimPrefix(sc, "checkpoint "), "--name", w.name,
			"--kafka-brokers", strings.Join(w.s.secured, ","), "--checkpoint-topic", w.cpTopic,
			"--mysql-addr", w.e.Maria.Addr(), "--mysql-user", "root", "--idle-checkpoint", "100ms"}
		if sc == scSet {
			args = append(args, "--gtid", start)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			o := w.cli(args...)
			if o.ok || !strings.Contains(o.log, "looks active") || time.Now().After(deadline) {
				return o
			}
			time.Sleep(200 * time.Millisecond)
		}
	case scVal:
		o := w.cli(append([]string{"validate"}, w.routerArgs(start)...)...)
		o.ok = o.ok && !strings.Contains(o.log, "FAIL ")
		return o
	case scReplay:
		w.e.InsertTx(good)
		args := append([]string{"replay"}, w.routerArgs(start, "--from-gtid", start, "--to-gtid", w.e.GTIDPos())...)
		o := w.cli(args...)
		if o.ok {
			c := harness.NewConsumer(w.t, w.s.Apache.Brokers(), "^"+w.prefix+`\.ACLRouted$`)
			recs, _ := c.ReadUntil(func(r []*kgo.Record) bool { return slices.Contains(harness.RecordIDs(r), good.ID) }, 30*time.Second)
			o.ok = slices.Contains(harness.RecordIDs(recs), good.ID)
		}
		return o
	}
	w.t.Fatalf("unknown scenario %q", sc)
	return aclOutcome{}
}

// runRouter runs the router from start until the good row is read back (and,
// with dlq, the bad one dead-lettered), then stops it; or until it exits
// by itself, or aclWait passes.
func (w *aclWorld) runRouter(start, goodID string, dlq bool, extra ...string) aclOutcome {
	w.t.Helper()
	began := time.Now()
	r := harness.StartRouter(w.t, w.routerArgs(start, extra...)...)
	c := harness.NewConsumer(w.t, w.s.Apache.Brokers(), "^"+w.prefix+`\.ACLRouted$`)
	var d *harness.Consumer
	if dlq {
		d = harness.NewConsumer(w.t, w.s.Apache.Brokers(), harness.ExactTopic(w.dlqTopic))
	}
	routed, lettered := false, !dlq
	for time.Since(began) < aclWait && r.Running() && !(routed && lettered) {
		if !routed {
			recs := c.Quiet(300 * time.Millisecond)
			routed = slices.Contains(harness.RecordIDs(recs), goodID)
		}
		if !lettered {
			lettered = len(d.Quiet(300*time.Millisecond)) > 0
		}
	}
	o := aclOutcome{took: time.Since(began)}
	if routed && lettered {
		o.code = r.Stop(30 * time.Second)
		o.ok = o.code == 0
	} else if r.Running() {
		r.Kill()
		o.code = -1
	} else {
		o.code = r.ExitCode()
	}
	o.log = r.Out.String()
	o.lines = strings.Count(o.log, "\n")
	return o
}

// cli runs a binlog-router command with the world's SASL_SSL flags.
func (w *aclWorld) cli(args ...string) aclOutcome {
	w.t.Helper()
	began := time.Now()
	res := harness.RunCLI(w.t, append(args, w.auth...)...)
	o := aclOutcome{ok: res.Code == 0, code: res.Code, log: res.Stdout + res.Stderr, took: time.Since(began)}
	o.lines = strings.Count(o.log, "\n")
	return o
}

// aclCase is one ACL of docs/grants.md's list taken away.
type aclCase struct {
	grant func(w *aclWorld) aclGrant
	fresh bool     // run before anything created the world's topics (a CREATE)
	fails []string // the scenarios that must fail without it
	want  func(w *aclWorld) []string
	warns bool // optional: the scenarios still work, with a warning that names it
}

// TestApacheACLs: on Apache Kafka with StandardAuthorizer, the router's
// principal granted exactly the ACLs of docs/grants.md runs exactly-once,
// at-least-once, with --ha and with dead letters, replays, and shows, sets
// and resets its checkpoint. Then each ACL is taken away in turn: every
// command that needs it fails within aclWait with an error that names the
// resource and the operation to grant, writing at most aclMaxLog lines (no
// retry storm); the optional DESCRIBE_CONFIGS grants only cost a warning.
// Nothing in the list is unneeded: each one is missed by some command.
func TestApacheACLs(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	s := startSecuredKafka(t, securedKafkaConfig{acls: true, scram: map[string]string{"router": "r0uter-s3cret", "admin": "adm1n-s3cret"}})
	adm := adminOf(t, s.Kafka)
	auth := s.routerTLS(t, "router", "r0uter-s3cret")
	world := func(i int) *aclWorld {
		p := fmt.Sprintf("%sa%d", e.Prefix, i)
		return &aclWorld{t: t, e: e, s: s, adm: adm, name: fmt.Sprintf("acl%d", i), prefix: p,
			cpTopic: p + "_checkpoints", dlqTopic: p + "_dlq", auth: auth}
	}
	report := func(what string, sc string, o aclOutcome) {
		last := ""
		if lines := strings.Split(strings.TrimSpace(o.log), "\n"); len(lines) > 0 {
			last = lines[len(lines)-1]
		}
		t.Logf("%s: %s: ok %v, exit %d in %s, %d log lines; last: %s", what, sc, o.ok, o.code, o.took.Round(time.Millisecond), o.lines, last)
	}

	w := world(0)
	w.setGrants(w.readmeGrants(), true)
	for _, sc := range allScenarios {
		o := w.scenario(sc)
		report("all README grants", sc, o)
		require.True(t, o.ok, "%s with the README's grants:\n%s", sc, o.log)
		if sc != scVal { // validate warns that it cannot read the brokers' configs
			assert.NotContains(t, o.log, "AUTHORIZATION_FAILED")
		}
	}

	g := func(i int) func(w *aclWorld) aclGrant {
		return func(w *aclWorld) aclGrant { return w.readmeGrants()[i] }
	}
	say := func(f func(w *aclWorld) []string) func(w *aclWorld) []string { return f }
	cases := []aclCase{
		{grant: g(0), fails: []string{scRun, scReplay}, want: say(func(w *aclWorld) []string { return []string{w.prefix + ".ACLRouted", "WRITE"} })},
		{grant: g(1), fresh: true, fails: []string{scRun}, want: say(func(w *aclWorld) []string { return []string{w.prefix + ".ACLRouted", "CREATE"} })},
		{grant: g(2), warns: true, fails: []string{scRun}, want: say(func(w *aclWorld) []string { return []string{"DESCRIBE_CONFIGS on topic " + w.prefix + ".ACLRouted"} })},
		{grant: g(3), fails: []string{scRun, scShow, scSet, scReset}, want: say(func(w *aclWorld) []string { return []string{w.cpTopic, "READ"} })},
		{grant: g(4), fails: []string{scRun, scSet, scReset}, want: say(func(w *aclWorld) []string { return []string{w.cpTopic, "WRITE"} })},
		{grant: g(5), fresh: true, fails: []string{scRun}, want: say(func(w *aclWorld) []string { return []string{w.cpTopic, "CREATE"} })},
		{grant: g(6), warns: true, fails: []string{scRun}, want: say(func(w *aclWorld) []string { return []string{"DESCRIBE_CONFIGS on topic " + w.cpTopic} })},
		{grant: g(7), fails: []string{scDLQ}, want: say(func(w *aclWorld) []string { return []string{w.dlqTopic, "WRITE"} })},
		{grant: g(8), fresh: true, fails: []string{scDLQ}, want: say(func(w *aclWorld) []string { return []string{w.dlqTopic, "CREATE"} })},
		{grant: g(9), warns: true, fails: []string{scDLQ}, want: say(func(w *aclWorld) []string { return []string{"DESCRIBE_CONFIGS on topic " + w.dlqTopic} })},
		{grant: g(10), fails: []string{scRun, scHA, scSet, scReset}, want: say(func(w *aclWorld) []string { return []string{"transactional id binlog-router-" + w.name, "WRITE"} })},
		{grant: g(11), fails: []string{scHA, scSet, scReset}, want: say(func(w *aclWorld) []string { return []string{"group binlog-router-" + w.name} })},
		{grant: g(12), fails: []string{scReplay}, want: say(func(w *aclWorld) []string {
			return []string{"transactional id binlog-router-replay-" + w.name + "-", "WRITE"}
		})},
		{grant: g(13), warns: true, fails: []string{scVal}, want: say(func(w *aclWorld) []string {
			return []string{"WARN kafka transactions", "initialising a producer with the throwaway transactional id binlog-router-validate-"}
		})},
		{grant: g(14), fails: []string{scRun, scHA, scSet, scReset}, want: say(func(w *aclWorld) []string {
			return []string{"transactional id binlog-router-" + w.name + "#2", "WRITE"}
		})},
	}
	require.Len(t, cases, len(w.readmeGrants()), "one case per README grant")
	parent := t
	for i, c := range cases {
		w := world(i + 1)
		missing := c.grant(w)
		var rest []aclGrant
		for _, gr := range w.readmeGrants() {
			if gr != missing {
				rest = append(rest, gr)
			}
		}
		t.Run("without "+missing.String(), func(t *testing.T) {
			w.t, e.T = t, t
			defer func() { e.T = parent }()
			if c.fresh {
				w.setGrants(rest, true)
			} else {
				w.setGrants(w.readmeGrants(), true)
				require.True(t, w.scenario(scRun).ok, "a first run with every grant")
				w.setGrants([]aclGrant{missing}, false)
			}
			for _, sc := range c.fails {
				o := w.scenario(sc)
				report("without "+missing.String(), sc, o)
				if c.warns {
					assert.True(t, o.ok, "%s works without %s:\n%s", sc, missing, o.log)
				} else {
					assert.False(t, o.ok, "%s needs %s", sc, missing)
					assert.NotEqual(t, -1, o.code, "%s stops by itself within %s", sc, aclWait)
					assert.LessOrEqual(t, o.lines, aclMaxLog, "%s: no retry storm", sc)
				}
				for _, want := range c.want(w) {
					assert.Contains(t, o.log, want, "%s without %s", sc, missing)
				}
				if t.Failed() {
					t.Logf("%s log:\n%s", sc, o.log)
				}
			}
		})
	}
}
