package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/binlog-router/binlog-router/internal/config"
	"github.com/binlog-router/binlog-router/internal/validate"
)

func init() { commands["validate"] = cmdValidate }

// cmdValidate checks everything `run` with the same flags would need and
// prints one line per check. It exits with the code `run` would exit with
// for the failed checks (validateExit); 0 when none failed.
func cmdValidate(ctx context.Context, args []string) int {
	cfg := config.Default()
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: binlog-router validate [the flags of run]\n\nChecks the server, the outbox tables, Kafka and the checkpoint, and prints how to fix each problem.")
		fs.PrintDefaults()
	}
	cfg.Register(fs, config.CmdValidate)
	if err := parse(fs, args); err != nil {
		return usageError(err)
	}
	if err := cfg.Validate(); err != nil {
		fmt.Println(validate.Check{Name: "configuration", Status: validate.Fail,
			Detail: strings.ReplaceAll(err.Error(), "\n", "; "), Fix: "correct the flags, BINLOG_ROUTER_* variables or config file"})
		return exitUsage
	}
	var checks []validate.Check
	for _, w := range cfg.Warnings() {
		checks = append(checks, securityWarning(w))
	}
	checks = append(checks, validate.Run(ctx, cfg.ValidateConfig())...)
	for _, c := range checks {
		fmt.Println(c)
	}
	if code := validateExit(checks); code != exitOK {
		fmt.Printf("validate: %s: fix each FAIL above, then validate again\n", validate.Summary(checks))
		return code
	}
	fmt.Printf("validate: %s: ready to run\n", validate.Summary(checks))
	return exitOK
}

// validateExit is the exit code of validate: that of `run` for the worst
// failed check (exitUsage for configuration, the tables and --start named
// on the command line and the server settings the router requires;
// exitPurged when the checkpoint's binlog is gone; exitFatal for any other
// failure), or exitOK.
func validateExit(checks []validate.Check) int {
	cause, failed := validate.Worst(checks)
	switch {
	case !failed:
		return exitOK
	case cause == validate.CauseConfig:
		return exitUsage
	case cause == validate.CausePurged:
		return exitPurged
	}
	return exitFatal
}

// securityWarning turns one of config's security warnings into a check,
// splitting off its advice ("...: use verify-identity ...") as the fix.
func securityWarning(w string) validate.Check {
	c := validate.Check{Name: "security", Status: validate.Warn, Detail: w, Fix: "do not use this setting outside tests"}
	if i := strings.LastIndex(w, ": "); i >= 0 {
		if advice := w[i+2:]; strings.HasPrefix(advice, "use ") || strings.HasPrefix(advice, "add ") {
			c.Detail, c.Fix = w[:i], advice
		}
	}
	return c
}
