// Package deploy holds what operators install next to binlog-router: the
// Prometheus alerting rules (prometheus/binlog-router.rules.yml, with
// their promtool unit tests) and the Grafana dashboard
// (grafana/binlog-router.json), embedded so that tests read the very
// files that ship. docs/alerts.md explains both.
package deploy

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// RulesYAML is prometheus/binlog-router.rules.yml.
//
//go:embed prometheus/binlog-router.rules.yml
var RulesYAML []byte

// DashboardJSON is grafana/binlog-router.json.
//
//go:embed grafana/binlog-router.json
var DashboardJSON []byte

// RuleFile is a Prometheus rule file, as far as the tests read it.
type RuleFile struct {
	Groups []RuleGroup `yaml:"groups"`
}

// RuleGroup is one group of a rule file.
type RuleGroup struct {
	Name  string `yaml:"name"`
	Rules []Rule `yaml:"rules"`
}

// Rule is one alerting rule.
type Rule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

// Rules parses RulesYAML.
func Rules() (RuleFile, error) {
	var f RuleFile
	if err := yaml.Unmarshal(RulesYAML, &f); err != nil {
		return f, fmt.Errorf("parsing binlog-router.rules.yml: %w", err)
	}
	return f, nil
}

// Alerts are the rules of every group, in file order.
func (f RuleFile) Alerts() []Rule {
	var out []Rule
	for _, g := range f.Groups {
		out = append(out, g.Rules...)
	}
	return out
}

// Query is one query of a dashboard panel.
type Query struct {
	Panel string // the panel's title
	Expr  string // PromQL with Grafana's variables ($job, $instance, $__rate_interval)
}

// DashboardQueries lists every query of every panel of DashboardJSON.
func DashboardQueries() ([]Query, error) {
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(DashboardJSON, &d); err != nil {
		return nil, fmt.Errorf("parsing binlog-router.json: %w", err)
	}
	var out []Query
	for _, p := range d.Panels {
		for _, t := range p.Targets {
			out = append(out, Query{Panel: p.Title, Expr: t.Expr})
		}
	}
	return out, nil
}
