package config

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"go.yaml.in/yaml/v3"

	"github.com/binlog-router/binlog-router/internal/schema"
)

// configFlag names the flag (and, through EnvName, the environment
// variable BINLOG_ROUTER_CONFIG) that points at a config file.
const configFlag = "config"

// Load fills the flags of fs from, by precedence, the command line (args),
// the environment (BINLOG_ROUTER_*, see ApplyEnv) and the config file named
// by --config or BINLOG_ROUTER_CONFIG (see ApplyFile); flags set nowhere
// keep their defaults. A FlagSet without a config flag reads no file.
func Load(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := ApplyEnv(fs); err != nil {
		return err
	}
	f := fs.Lookup(configFlag)
	if f == nil || f.Value.String() == "" {
		return nil
	}
	return ApplyFile(fs, f.Value.String())
}

// fileEntry is one key of a config file.
type fileEntry struct {
	key    string
	line   int // 0 when unknown
	values []string
	list   bool // the value was a list
}

// ApplyFile sets every flag of fs not set yet (on the command line or from
// the environment) from the config file at path: YAML if it ends in .yaml
// or .yml, TOML if .toml. Keys are flag names; a list is allowed for list
// flags (--outbox-table, --kafka-brokers); durations are strings ("100ms").
// Keys that are flags of `binlog-router run` but not of fs are checked but
// not applied, so one file serves every command; any other key is an
// error.
func ApplyFile(fs *flag.FlagSet, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	var entries []fileEntry
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".yaml", ".yml":
		entries, err = parseYAML(data)
	case ".toml":
		entries, err = parseTOML(data)
	default:
		return fmt.Errorf("config file %s: unknown format %q: name it *.yaml, *.yml or *.toml", path, ext)
	}
	if err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	run := runFlags()
	known := map[string]bool{}
	for _, s := range []*flag.FlagSet{fs, run} {
		s.VisitAll(func(f *flag.Flag) { known[f.Name] = true })
	}
	seen := map[string]bool{}
	var errs []error
	for _, e := range entries {
		where := path
		if e.line > 0 {
			where += ":" + strconv.Itoa(e.line)
		}
		bad := func(format string, a ...any) {
			errs = append(errs, fmt.Errorf("config file %s: key %q: %s", where, e.key, fmt.Sprintf(format, a...)))
		}
		switch {
		case seen[e.key]:
			bad("appears twice")
			continue
		case e.key == configFlag:
			bad("a config file cannot name another one")
			continue
		case !known[e.key]:
			msg := fmt.Sprintf("config file %s: unknown key %q", where, e.key)
			if s := closest(e.key, known); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			errs = append(errs, errors.New(msg+"; keys are the flag names of `binlog-router run -h`"))
			continue
		}
		seen[e.key] = true
		// Apply the value to fs; if fs lacks the flag (a key of `run`
		// only) or has it set with more precedence, still check the value
		// on the throwaway run flags, so a file is equally valid for every
		// command and whatever overrides it.
		target := fs
		if fs.Lookup(e.key) == nil || set[e.key] {
			target = run
		}
		f := target.Lookup(e.key)
		if f == nil {
			continue // a flag of fs only, set with more precedence
		}
		_, isList := f.Value.(*listFlag)
		if e.list && !isList {
			bad("takes one value, not a list")
			continue
		}
		if e.list && len(e.values) == 0 {
			e.values = []string{""} // an empty list empties the default
		}
		for _, v := range e.values {
			if err := target.Set(e.key, v); err != nil {
				bad("invalid value %q: %v", v, err)
				break
			}
		}
	}
	return errors.Join(errs...)
}

// runFlags are the flags of `binlog-router run`, on a throwaway Config.
func runFlags() *flag.FlagSet {
	run := flag.NewFlagSet("run", flag.ContinueOnError)
	d := Default()
	d.Register(run, CmdRun)
	return run
}

func parseYAML(data []byte) ([]fileEntry, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil // empty file
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: want a mapping of flag names to values, e.g. \"mysql-addr: db:3306\"", root.Line)
	}
	var out []fileEntry
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: a key must be a flag name", k.Line)
		}
		e := fileEntry{key: k.Value, line: k.Line}
		if v.Kind == yaml.AliasNode {
			v = v.Alias
		}
		switch v.Kind {
		case yaml.ScalarNode:
			s, err := yamlScalar(k.Value, v)
			if err != nil {
				return nil, err
			}
			e.values = []string{s}
		case yaml.SequenceNode:
			e.list = true
			for _, item := range v.Content {
				if item.Kind == yaml.AliasNode {
					item = item.Alias
				}
				if item.Kind != yaml.ScalarNode {
					return nil, fmt.Errorf("line %d: key %q: a list holds plain values only", item.Line, k.Value)
				}
				s, err := yamlScalar(k.Value, item)
				if err != nil {
					return nil, err
				}
				e.values = append(e.values, s)
			}
		default:
			return nil, fmt.Errorf("line %d: key %q: nested mappings are not supported; keys are flag names, e.g. \"mysql-tls-ca: /etc/ssl/ca.pem\"", v.Line, k.Value)
		}
		out = append(out, e)
	}
	return out, nil
}

func yamlScalar(key string, n *yaml.Node) (string, error) {
	if n.Tag == "!!null" {
		return "", fmt.Errorf("line %d: key %q has no value (write \"\" for an empty string)", n.Line, key)
	}
	return n.Value, nil
}

func parseTOML(data []byte) ([]fileEntry, error) {
	m := map[string]any{}
	md, err := toml.Decode(string(data), &m)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, k := range md.Keys() { // file order
		if len(k) == 1 {
			keys = append(keys, k[0])
		}
	}
	if len(keys) != len(m) { // cannot happen; keep every key anyway
		keys = keys[:0]
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
	}
	var out []fileEntry
	for _, k := range keys {
		e := fileEntry{key: k}
		switch v := m[k].(type) {
		case []any:
			e.list = true
			for _, item := range v {
				s, err := tomlScalar(k, item)
				if err != nil {
					return nil, err
				}
				e.values = append(e.values, s)
			}
		default:
			s, err := tomlScalar(k, v)
			if err != nil {
				return nil, err
			}
			e.values = []string{s}
		}
		out = append(out, e)
	}
	return out, nil
}

func tomlScalar(key string, v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case bool:
		return strconv.FormatBool(v), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case map[string]any:
		return "", fmt.Errorf("key %q: tables are not supported; keys are flag names, e.g. mysql-tls-ca = \"/etc/ssl/ca.pem\"", key)
	case []any:
		return "", fmt.Errorf("key %q: a list holds plain values only", key)
	default:
		return "", fmt.Errorf("key %q: unsupported value %v (%T): quote it as a string", key, v, v)
	}
}

// closest returns the known key nearest to key, or "" if none is close.
func closest(key string, known map[string]bool) string {
	norm := strings.ReplaceAll(strings.ToLower(strings.TrimLeft(key, "-")), "_", "-")
	best, bestD := "", len(norm)/3+2
	names := make([]string, 0, len(known))
	for k := range known {
		names = append(names, k)
	}
	sort.Strings(names) // deterministic on ties
	for _, k := range names {
		if k == configFlag {
			continue
		}
		if d := schema.EditDistance(norm, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}
