package validate

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/gtid"
)

// retention compares how long the server keeps binlogs with the age of
// the stored checkpoint.
func (v *validator) retention(m *mysqlFacts, k *kafkaFacts) {
	if m == nil || !m.server.LogBin {
		return
	}
	in := retentionInput{flavor: m.server.Flavor, vars: m.vars, now: v.cfg.Now(), unread: k == nil || !k.known}
	if !in.unread {
		in.cp = k.checkpoint
	}
	v.add(checkRetention(in))
}

// retentionInput is what checkRetention judges.
type retentionInput struct {
	flavor gtid.Flavor
	vars   map[string]string
	cp     *checkpoint.Checkpoint // nil: none stored, or unread
	unread bool                   // the checkpoint could not be read
	now    time.Time
}

// binlogRetention returns how long the server keeps binlogs (0: no
// automatic purge by age) and the setting that says so.
func binlogRetention(flavor gtid.Flavor, vars map[string]string) (time.Duration, string) {
	if flavor == gtid.MySQL {
		if p, ok := vars[varExpireAutoPurge]; ok && !on(p) {
			return 0, varExpireAutoPurge + "=OFF"
		}
	}
	if s, ok := vars[varExpireSeconds]; ok {
		if n, err := strconv.ParseFloat(s, 64); err == nil && n > 0 {
			return time.Duration(n * float64(time.Second)), fmt.Sprintf("%s=%s", varExpireSeconds, s)
		}
		// MariaDB keeps the two in step: 0 seconds is 0 days.
		if flavor == gtid.MariaDB {
			return 0, varExpireSeconds + "=0"
		}
	}
	if d, ok := vars[varExpireDays]; ok {
		if n, err := strconv.ParseFloat(d, 64); err == nil && n > 0 {
			return time.Duration(n * 24 * float64(time.Hour)), fmt.Sprintf("%s=%s", varExpireDays, strings.TrimRight(strings.TrimRight(d, "0"), "."))
		}
	}
	return 0, varExpireSeconds + "=0, " + varExpireDays + "=0"
}

// checkRetention judges the binlog retention against the checkpoint's age:
// a checkpoint older than the retention fails, one past half of it warns.
func checkRetention(in retentionInput) Check {
	const name = "binlog retention"
	vars, cp := in.vars, in.cp
	keep, setting := binlogRetention(in.flavor, vars)
	raise := "raise " + varExpireSeconds + " (SET GLOBAL " + varExpireSeconds + " = ...) " + myCnf
	if keep == 0 {
		c := ok(name, "binlogs are not purged by age (%s)", setting)
		if size, _ := strconv.ParseInt(vars[varMaxBinlogTotal], 10, 64); size > 0 {
			return warn(name, "keep the router running, or raise "+varMaxBinlogTotal+" (0 = no limit)",
				"%s, but by size: the oldest go once all exceed %s=%d bytes, however recent they are", c.Detail, varMaxBinlogTotal, size)
		}
		return c
	}
	detail := fmt.Sprintf("binlogs are kept %s (%s)", human(keep), setting)
	if size, _ := strconv.ParseInt(vars[varMaxBinlogTotal], 10, 64); size > 0 {
		detail += fmt.Sprintf(", or less once they exceed %s=%d bytes", varMaxBinlogTotal, size)
	}
	switch {
	case in.unread:
		return ok(name, "%s; the checkpoint could not be read to compare with", detail)
	case cp == nil:
		return ok(name, "%s; no checkpoint to compare with", detail)
	}
	age := in.now.Sub(cp.Time)
	switch {
	case age > keep:
		return fail(name, "the binlogs after the checkpoint are probably gone: see the binlog position check; then keep the router running (it refreshes the checkpoint every --idle-checkpoint) and "+raise,
			"%s, but the checkpoint was written %s ago (%s): the server purges binlogs older than that", detail, human(age), cp.Time.UTC().Format(time.RFC3339))
	case age > keep/2:
		deadline := cp.Time.Add(keep).UTC().Format(time.RFC3339)
		return warn(name, fmt.Sprintf("start the router before %s, or %s", deadline, raise),
			"%s, and the checkpoint was written %s ago, more than half of that: the binlogs after it may be purged from %s on", detail, human(age), deadline)
	}
	if keep < shortRetention {
		return warn(name, shortRetentionFix(raise),
			"%s; the checkpoint is %s old, but a router stopped longer than %s (a weekend) finds the binlogs after it purged", detail, human(age), human(keep))
	}
	return ok(name, "%s; the checkpoint is %s old", detail, human(age))
}

// shortRetention is the least binlog retention that outlasts a weekend's
// outage; a shorter one is warned of.
const shortRetention = 72 * time.Hour

// shortRetentionFix is the fix of a retention shorter than shortRetention.
func shortRetentionFix(raise string) string {
	return "raise it to 3 days or more (" + raise + "), or alert on a stopped router (BinlogRouterDown); past it, `binlog-router recover --since-checkpoint` publishes the gap from the outbox table, which must keep its rows as long (docs/recover.md)"
}

// human formats a duration in days, hours or minutes.
func human(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%.1fd", d.Hours()/24)
	case d >= time.Hour:
		return fmt.Sprintf("%.1fh", d.Hours())
	}
	return d.Round(time.Second).String()
}

// position checks that the server still has the binlog after the position
// the router would start from: the checkpoint, or --start without one.
func (v *validator) position(m *mysqlFacts, k *kafkaFacts) {
	const name = "binlog position"
	if m == nil || !m.server.LogBin {
		return
	}
	if k == nil || !k.known {
		v.add(warn(name, "fix the Kafka and checkpoint checks above, then validate again", "not checked: no usable checkpoint could be read"))
		return
	}
	in := positionInput{name: v.cfg.Name, flavor: m.server.Flavor, executed: m.server.Executed, purged: m.server.Purged,
		oldest: m.oldest, oldestErr: m.oldestErr}
	if k.checkpoint != nil {
		set, err := gtid.Parse(m.server.Flavor, k.checkpoint.GTIDSet)
		if err != nil {
			return // the checkpoint check failed on it
		}
		in.pos, in.from = set, "the checkpoint"
	} else {
		set, err := checkpoint.ResolveStart(v.cfg.Start, m.server)
		if err != nil {
			v.add(because(CauseConfig, fail(name, "correct --start: earliest, latest or gtid:<set> in the server's syntax", "%v", err)))
			return
		}
		if strings.HasPrefix(v.cfg.Start, "gtid:") && set.IsEmpty() {
			v.add(because(CauseConfig, fail(name, "use --start earliest to start at the oldest binlog the server has", "--start %q is an empty GTID set", v.cfg.Start)))
			return
		}
		in.pos, in.from, in.start = set, "--start "+v.cfg.Start, true
		in.earliest = v.cfg.Start == "earliest"
	}
	v.add(checkPosition(in))
}

// positionInput is what checkPosition judges.
type positionInput struct {
	name             string // --name, for the fix
	flavor           gtid.Flavor
	pos              *gtid.Set // where the router would start
	from             string    // "the checkpoint" or "--start ..."
	start            bool      // pos comes from --start, not from a checkpoint
	earliest         bool      // --start earliest: the router starts at the oldest binlog, whatever was purged
	executed, purged *gtid.Set // the server's (purged: MySQL only)
	oldest           *binlogStart
	oldestErr        error
}

// checkPosition judges whether the server can send the binlog after pos:
// it must not be ahead of the server, and nothing after it may be purged
// (MySQL: pos covers gtid_purged; MariaDB: pos has reached, in every
// domain, the Gtid_list at the start of the oldest binlog). A failure is
// the cause `run` stops with: a refused --start is configuration, a
// checkpoint whose binlog is gone is CausePurged. --start earliest after
// a purge only warns: run starts at the oldest binlog and logs that the
// transactions before it are gone.
func checkPosition(in positionInput) Check {
	c := judgePosition(in)
	switch {
	case c.Status != Fail || !in.start:
	case in.earliest && c.Cause == CausePurged:
		c.Status, c.Cause = Warn, CauseError
		c.Detail += "; --start earliest starts at the oldest binlog, and the outbox rows of the purged transactions are not published"
		c.Fix = "if those rows were never published, republish them from the outbox table; to start elsewhere, use --start gtid:<set> or latest"
	default:
		c.Cause = CauseConfig
	}
	return c
}

func judgePosition(in positionInput) Check {
	const name = "binlog position"
	at := in.from + " " + bracket(in.pos)
	if ahead := in.pos.Subtract(in.executed); !ahead.IsEmpty() {
		return fail(name, fmt.Sprintf("point --mysql-addr at the server the checkpoint was written for (or one that replicated all of it); to start over on this server, binlog-router checkpoint reset --name %s (with the router's flags)", in.name),
			"%s has transactions this server never logged: %s (the server is at %s)", at, bracket(ahead), bracket(in.executed))
	}
	republish := "the outbox events in the purged range were never published: republish them from the outbox table (or a backup), then move the checkpoint to the oldest position the server has: "
	if in.flavor == gtid.MySQL {
		missing := in.purged.Subtract(in.pos)
		if missing.IsEmpty() {
			return ok(name, "the server still has every transaction after %s (gtid_purged %s)", at, bracket(in.purged))
		}
		return because(CausePurged, fail(name, republish+fmt.Sprintf("binlog-router checkpoint set --name %s --gtid %s (with the router's flags)", in.name, in.purged),
			"the server purged %s, which %s does not cover: the router cannot read them", bracket(missing), at))
	}
	if in.oldest == nil {
		return warn(name, "grant the user BINLOG MONITOR (REPLICATION CLIENT before MariaDB 10.5.2), which SHOW BINARY LOGS and SHOW BINLOG EVENTS need",
			"cannot tell whether the server still has the binlog after %s: %v", at, in.oldestErr)
	}
	before := in.oldest.before
	if in.pos.Contains(before) {
		return ok(name, "the server still has every binlog after %s (the oldest, %s, starts after %s)", at, in.oldest.file, bracket(before))
	}
	posSeq := map[uint32]uint64{}
	for _, e := range mariadbEntries(in.pos) {
		posSeq[e.domain] = e.seq
	}
	var gone []string
	for _, e := range mariadbEntries(before.Subtract(in.pos)) {
		gone = append(gone, fmt.Sprintf("domain %d seq %d to %d (up to %d-%d-%d)", e.domain, posSeq[e.domain]+1, e.seq, e.domain, e.server, e.seq))
	}
	fix := republish + fmt.Sprintf("binlog-router checkpoint set --name %s --gtid %s (with the router's flags)", in.name, before)
	if in.start {
		fix = fmt.Sprintf("start at the oldest binlog with --start gtid:%s; the events before it are gone from the binlog (republish them from the outbox table if they were never published), or use --start latest", before)
	}
	return because(CausePurged, fail(name, fix, "the oldest binlog %s starts after %s, but the router would start after %s: %s purged",
		in.oldest.file, bracket(before), at, strings.Join(gone, ", ")))
}

type mariadbEntry struct {
	domain, server uint32
	seq            uint64
}

// mariadbEntries lists a MariaDB position's GTIDs, from its canonical
// string (gtid.Set does not expose its entries).
func mariadbEntries(s *gtid.Set) []mariadbEntry {
	var out []mariadbEntry
	for _, g := range strings.Split(s.String(), ",") {
		parts := strings.Split(g, "-")
		if len(parts) != 3 {
			continue
		}
		d, err1 := strconv.ParseUint(parts[0], 10, 32)
		sv, err2 := strconv.ParseUint(parts[1], 10, 32)
		q, err3 := strconv.ParseUint(parts[2], 10, 64)
		if err1 == nil && err2 == nil && err3 == nil {
			out = append(out, mariadbEntry{uint32(d), uint32(sv), q})
		}
	}
	return out
}
