package config

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// EnvPrefix prefixes the environment variable of every flag.
const EnvPrefix = "BINLOG_ROUTER_"

// EnvName is the environment variable read for a flag name.
func EnvName(flagName string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// Command is a set of binlog-router commands: the commands that take a
// flag of the flag table (flagtable.go).
type Command uint16

// The commands that take flags (CmdPrune: `binlog-router prune`,
// CmdRecover: `binlog-router recover`).
const (
	CmdRun Command = 1 << iota
	CmdValidate
	CmdReplay
	CmdCheckpointShow
	CmdCheckpointSet
	CmdCheckpointReset
	CmdSchema
	CmdPrune
	CmdRecover
)

const (
	// CmdCheckpoint are the checkpoint subcommands.
	CmdCheckpoint = CmdCheckpointShow | CmdCheckpointSet | CmdCheckpointReset
	// Router are the commands that take every flag of run (with its
	// environment variable and file key), so that the router's command
	// line, environment and config file serve them unchanged.
	Router = CmdRun | CmdValidate | CmdReplay | CmdCheckpoint | CmdPrune | CmdRecover
)

// ignoredPrefix starts the usage of a flag a command takes only because
// it is a flag of run (flagSpec.ignores).
const ignoredPrefix = "(a flag of run, ignored here) "

// flagSpec is one entry of the flag table: the flag --name, its
// environment variable EnvName(name) and its config-file key name, with
// its default, usage, destination in Config and the commands that take
// it. The flag package prints the default in -h and the flag tables of
// docs/ state it (TestFlagTablesMatchDocs).
type flagSpec struct {
	name  string
	usage string
	cmds  Command // the commands that take the flag
	// ignores are commands of cmds that take the flag only so that the
	// router's command line can be reused, and do nothing with it; their
	// -h says so.
	ignores Command
	// doc is the default as docs/ states it, when the flag's own
	// default ("") stands for one computed later ("from preset"); "" when
	// the flag's default is the value itself.
	doc string

	setDefault func(*Config)                        // sets the destination to the default
	bind       func(*Config, *flag.FlagSet, string) // registers the flag, with this usage, on the destination
}

// value is what a flag of the table can hold.
type value interface {
	string | bool | int | int64 | uint | time.Duration | []string
}

// flagOf declares the flag name of the commands cmds: default def,
// destination *dst(c).
func flagOf[T value](cmds Command, name string, def T, usage string, dst func(*Config) *T) flagSpec {
	return flagSpec{
		name:  name,
		usage: usage,
		cmds:  cmds,
		setDefault: func(c *Config) {
			p := dst(c)
			*p = def
			if l, ok := any(p).(*[]string); ok {
				*l = slices.Clone(*l) // never share the default's array
			}
		},
		bind: func(c *Config, fs *flag.FlagSet, usage string) {
			switch p := any(dst(c)).(type) {
			case *string:
				fs.StringVar(p, name, *p, usage)
			case *bool:
				fs.BoolVar(p, name, *p, usage)
			case *int:
				fs.IntVar(p, name, *p, usage)
			case *int64:
				fs.Int64Var(p, name, *p, usage)
			case *uint:
				fs.UintVar(p, name, *p, usage)
			case *time.Duration:
				fs.DurationVar(p, name, *p, usage)
			case *[]string:
				fs.Var(&listFlag{dst: p}, name, usage)
			}
		},
	}
}

// valueOf declares a flag of the commands cmds whose destination is a
// flag.Value (OptionalString, OptionalTime); its default is the zero
// value.
func valueOf[V any, P interface {
	*V
	flag.Value
}](cmds Command, name, usage string, dst func(*Config) P) flagSpec {
	return flagSpec{
		name:       name,
		usage:      usage,
		cmds:       cmds,
		setDefault: func(c *Config) { *dst(c) = *new(V) },
		bind:       func(c *Config, fs *flag.FlagSet, usage string) { fs.Var(dst(c), name, usage) },
	}
}

// ignoredBy marks the commands that take f only as a flag of run.
func (f flagSpec) ignoredBy(cmds Command) flagSpec {
	f.ignores = cmds
	return f
}

// documented sets the default docs/ states for f.
func (f flagSpec) documented(def string) flagSpec {
	f.doc = def
	return f
}

// Register registers on fs every flag that cmd (one command) takes, each
// bound to its field of c with the field's current value as its default:
// call it on Default().
func (c *Config) Register(fs *flag.FlagSet, cmd Command) {
	for _, f := range flagTable {
		if f.cmds&cmd == 0 {
			continue
		}
		usage := f.usage
		if f.ignores&cmd != 0 {
			usage = ignoredPrefix + usage
		}
		f.bind(c, fs, usage)
	}
}

// RegisterRun registers every flag of `binlog-router run`.
func (c *Config) RegisterRun(fs *flag.FlagSet) { c.Register(fs, CmdRun) }

// Default returns the defaults of every flag of the flag table.
func Default() Config {
	var c Config
	for _, f := range flagTable {
		f.setDefault(&c)
	}
	return c
}

// ApplyEnv sets every flag not given on the command line from its
// environment variable, if set.
func ApplyEnv(fs *flag.FlagSet) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || err != nil {
			return
		}
		if v, ok := os.LookupEnv(EnvName(f.Name)); ok {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s=%q: %w", EnvName(f.Name), v, e)
			}
		}
	})
	return err
}
