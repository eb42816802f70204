package validate

import (
	"context"
	"database/sql"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/binlog-router/binlog-router/internal/contract"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// RecentRows is how many of an outbox table's newest rows (by primary
// key) the contracts check reads the event types of: a bounded query
// on a table that may hold millions of rows.
const RecentRows = 10000

// contractsLoaded is the check that lists the contracts compiled from
// --contracts-dir.
func contractsLoaded(s *contract.Set) Check {
	var files []string
	for _, k := range s.Contracts() {
		files = append(files, filepath.Base(k.File))
	}
	return ok("contracts", "%d compiled from %s (--contracts-missing=%s): %s",
		len(files), s.Dir(), s.Missing(), strings.Join(files, ", "))
}

// recentEventTypes returns the distinct event types of t's RecentRows
// newest rows: newest by primary key, or any RecentRows rows when t has
// none.
func recentEventTypes(ctx context.Context, db *sql.DB, t schema.TableName, eventType string) ([]string, error) {
	pk, err := queryStrings(ctx, db, `SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE
WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY ORDINAL_POSITION`, t.Database, t.Table)
	if err != nil {
		return nil, err
	}
	order := ""
	for i, c := range pk {
		if i > 0 {
			order += ", "
		}
		order += schema.QuoteIdentifier(c) + " DESC"
	}
	if order != "" {
		order = " ORDER BY " + order
	}
	col := schema.QuoteIdentifier(eventType)
	q := "SELECT DISTINCT et FROM (SELECT " + col + " AS et FROM " + t.QuotedString() + order +
		" LIMIT " + strconv.Itoa(RecentRows) + ") AS recent WHERE et IS NOT NULL ORDER BY et"
	return queryStrings(ctx, db, q)
}

// contractsCoverage judges the event types seen in a table's recent rows
// against the contracts: each one without a contract is a warning, or a
// failure when --contracts-missing=fail would stop the router on it
// (deadLetter false).
func contractsCoverage(s *contract.Set, table string, seen []string, deadLetter bool) Check {
	name := "contracts of " + table
	var without []string
	for _, et := range seen {
		if !s.Has(et) {
			without = append(without, et)
		}
	}
	if len(without) == 0 {
		return ok(name, "each of the %d event types of its last %d rows has a contract", len(seen), RecentRows)
	}
	detail := "event types of its last %d rows without a contract in %s: %s"
	fix := "add <event_type>.json to " + s.Dir()
	switch {
	case s.Missing() == contract.MissingAllow:
		return warn(name, fix+" (with --contracts-missing=allow their payloads are routed unchecked)", detail, RecentRows, s.Dir(), strings.Join(without, ", "))
	case deadLetter:
		return warn(name, fix+" (with --contracts-missing=fail their rows go to the dead-letter topic)", detail, RecentRows, s.Dir(), strings.Join(without, ", "))
	}
	return fail(name, fix+", or run with --contracts-missing=allow (with fail the router stops at their rows)", detail, RecentRows, s.Dir(), strings.Join(without, ", "))
}

// contracts adds the check of the contracts against table's recent event
// types.
func (v *validator) contracts(db *sql.DB, t schema.TableName, eventType string) {
	var seen []string
	err := v.do(func(ctx context.Context) (err error) {
		seen, err = recentEventTypes(ctx, db, t, eventType)
		return err
	})
	if err != nil {
		v.add(warn("contracts of "+t.String(), "check by hand which event types have no contract",
			"cannot read the event types of its last %d rows: %v", RecentRows, err))
		return
	}
	v.add(contractsCoverage(v.cfg.Contracts, t.String(), seen, v.cfg.DeadLetterTopic != ""))
}
