package deploy_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"go.yaml.in/yaml/v3"

	"github.com/binlog-router/binlog-router/deploy"
	"github.com/binlog-router/binlog-router/internal/metrics"
)

// promtool finds Prometheus' promtool (Debian's prometheus package); the
// test is skipped, saying so, only where it is not installed.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not found: install Debian's prometheus package (apt-get install prometheus) to check the alerting rules")
	}
	return p
}

// TestRulesPromtool checks the rule file and runs its unit tests
// (binlog-router.rules.test.yml) with promtool.
func TestRulesPromtool(t *testing.T) {
	bin := promtool(t)
	for _, args := range [][]string{
		{"check", "rules", "binlog-router.rules.yml"},
		{"test", "rules", "binlog-router.rules.test.yml"},
	} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = "prometheus"
		out, err := cmd.CombinedOutput()
		t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
		if err != nil {
			t.Errorf("promtool %s: %v", strings.Join(args, " "), err)
		}
	}
}

// ruleTests is the part of a promtool test file this test reads.
type ruleTests struct {
	Tests []struct {
		AlertRuleTest []struct {
			Alertname string `yaml:"alertname"`
			ExpAlerts []any  `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

// TestEveryAlertTestedAndDocumented: every alert has a promtool case where
// it fires and one where it stays silent, a severity, the three
// annotations, and a section in docs/alerts.md.
func TestEveryAlertTestedAndDocumented(t *testing.T) {
	rules, err := deploy.Rules()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("prometheus/binlog-router.rules.test.yml")
	if err != nil {
		t.Fatal(err)
	}
	var tests ruleTests
	if err := yaml.Unmarshal(b, &tests); err != nil {
		t.Fatal(err)
	}
	fires, silent := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				silent[a.Alertname] = true
			}
		}
	}
	docs, err := os.ReadFile("../docs/alerts.md")
	if err != nil {
		t.Fatal(err)
	}
	alerts := rules.Alerts()
	if len(alerts) == 0 {
		t.Fatal("no alerts in the rule file")
	}
	for _, r := range alerts {
		if r.Alert == "" {
			t.Errorf("a rule without an alert name: %q", r.Expr)
			continue
		}
		if !fires[r.Alert] || !silent[r.Alert] {
			t.Errorf("%s: promtool cases where it fires %v, where it stays silent %v; want both", r.Alert, fires[r.Alert], silent[r.Alert])
		}
		if s := r.Labels["severity"]; s != "warning" && s != "critical" {
			t.Errorf("%s: severity %q, want warning or critical", r.Alert, s)
		}
		for _, a := range []string{"summary", "description", "runbook"} {
			if strings.TrimSpace(r.Annotations[a]) == "" {
				t.Errorf("%s: no %s annotation", r.Alert, a)
			}
		}
		if !strings.Contains(string(docs), "### "+r.Alert+"\n") {
			t.Errorf("%s: no section in docs/alerts.md", r.Alert)
		}
	}
}

var metricName = regexp.MustCompile(`\b((?:binlog_router|go|process)_[a-z0-9_]+)\b`)

// TestQueriesUseRouterMetrics: every metric the rules and the dashboard
// name is one the router exposes (a renamed metric fails here, not in an
// operator's silent dashboard).
func TestQueriesUseRouterMetrics(t *testing.T) {
	m := metrics.New(nil)
	// Labelled families appear once they have a child.
	m.Routed("orders", 10)
	m.RowError("null_event_type")
	m.DeadLetter("null_event_type")
	m.PartitionChanged("orders", 2, 4)
	metrics.NewReplicaWatch(m, zerolog.Nop(), metrics.ReplicaWatchConfig{}) // sets the refusing-writes gauges
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	exposed := map[string]bool{}
	for _, f := range fams {
		exposed[f.GetName()] = true
	}
	known := func(name string) bool {
		for _, suffix := range []string{"", "_bucket", "_count", "_sum"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && exposed[base] {
				return true
			}
		}
		return false
	}
	rules, err := deploy.Rules()
	if err != nil {
		t.Fatal(err)
	}
	queries, err := deploy.DashboardQueries()
	if err != nil {
		t.Fatal(err)
	}
	if len(queries) == 0 {
		t.Fatal("no queries in the dashboard")
	}
	var exprs []string
	for _, r := range rules.Alerts() {
		exprs = append(exprs, r.Expr)
	}
	for _, q := range queries {
		exprs = append(exprs, q.Expr)
	}
	for _, e := range exprs {
		names := metricName.FindAllString(e, -1)
		if len(names) == 0 && !strings.Contains(e, "up{") {
			t.Errorf("%q names no metric of the router", e)
		}
		for _, n := range names {
			if !known(n) {
				t.Errorf("%q: the router exposes no metric %s", e, n)
			}
		}
	}
}
