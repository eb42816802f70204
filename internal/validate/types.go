package validate

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// valueRules are the flags and server facts that decide whether a column
// type is published as the outbox contract promises.
type valueRules struct {
	requireUUID  bool              // --require-uuid
	validateJSON bool              // --validate-json
	uuid         binlog.UUIDBinary // --uuid-binary-layout
	zone         *time.Location    // the time zone of DATETIME values (--datetime-zone or the server's); nil: not known
	noZone       string            // why zone is nil
	fullMetadata bool              // binlog_row_metadata=FULL
}

// kind is what the router makes of a column's data type.
type kind int

const (
	kindOther   kind = iota // not published: FLOAT, DATE, ENUM, ...
	kindText                // CHAR, VARCHAR, the TEXT types (MariaDB's JSON is a LONGTEXT)
	kindBinary              // BINARY, VARBINARY, the BLOB types
	kindUUID                // MariaDB's UUID
	kindInteger             // TINYINT ... BIGINT
	kindDecimal             // DECIMAL
	kindJSON                // MySQL's JSON
	kindTime                // TIMESTAMP, DATETIME
)

func kindOf(dataType string) kind {
	switch dataType {
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext":
		return kindText
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		return kindBinary
	case "uuid":
		return kindUUID
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint":
		return kindInteger
	case "decimal", "numeric":
		return kindDecimal
	case "json":
		return kindJSON
	case "timestamp", "datetime":
		return kindTime
	}
	return kindOther
}

// finding is the verdict on one mapped column.
type finding struct {
	status Status
	detail string // what the router makes of it, or what is wrong
	fix    string // for Warn and Fail
}

// typeRule judges the column of one outbox field.
type typeRule struct {
	field   string // as in messages
	ordinal func(schema.Layout) int
	judge   func(c column, r valueRules) finding
	want    string // the recommended type, for fixes
}

var typeRules = []typeRule{
	{field: "event id", ordinal: func(l schema.Layout) int { return l.EventID }, judge: judgeEventID, want: "CHAR(36)"},
	{field: "aggregate type", ordinal: func(l schema.Layout) int { return l.AggregateType }, judge: judgeName, want: "VARCHAR(255)"},
	{field: "aggregate id", ordinal: func(l schema.Layout) int { return l.AggregateID }, judge: judgeKey, want: "VARCHAR(255)"},
	{field: "event type", ordinal: func(l schema.Layout) int { return l.EventType }, judge: judgeName, want: "VARCHAR(255)"},
	{field: "payload", ordinal: func(l schema.Layout) int { return l.Payload }, judge: judgePayload, want: "JSON (MariaDB: LONGTEXT)"},
	{field: "creation time", ordinal: func(l schema.Layout) int { return l.CreatedAt }, judge: judgeCreatedAt, want: "TIMESTAMP(6)"},
	{field: "schema version", ordinal: func(l schema.Layout) int { return l.SchemaVersion }, judge: judgeSchemaVersion, want: "INT"},
	{field: "traceparent", ordinal: func(l schema.Layout) int { return l.Traceparent }, judge: judgeText, want: "VARCHAR(55)"},
	{field: "headers", ordinal: func(l schema.Layout) int { return l.Headers }, judge: judgeHeaders, want: "JSON (MariaDB: LONGTEXT)"},
}

// checkTypes judges each mapped column's type against what the router
// publishes with the flags given: a column the router would stop at, or
// whose every value the flags refuse, fails; an unusual one that works
// warns.
func checkTypes(info tableInfo, layout schema.Layout, rules valueRules) Check {
	name := "outbox column types " + info.name.String()
	status := OK
	var details, fixes []string
	for _, r := range typeRules {
		ord := r.ordinal(layout)
		if ord < 0 || ord >= len(info.columns) {
			continue
		}
		c := info.columns[ord]
		f := judgeCharset(c)
		if f.status == OK {
			f = r.judge(c, rules)
		}
		d := fmt.Sprintf("%s %s", c.name, c.fullType)
		if f.detail != "" {
			d += " (" + f.detail + ")"
		}
		if f.status != OK {
			d = fmt.Sprintf("%s %s (the %s) is %s: %s", f.status, c.name, r.field, c.fullType, f.detail)
			fix := f.fix
			if fix == "" {
				fix = fmt.Sprintf("ALTER TABLE %s MODIFY %s %s (keeping NULL/NOT NULL)", info.name.QuotedString(), schema.QuoteIdentifier(c.name), r.want)
			}
			fixes = append(fixes, fix)
		}
		if f.status == Fail || f.status == Warn && status == OK {
			status = f.status
		}
		details = append(details, d)
	}
	detail := strings.Join(details, "; ")
	switch status {
	case Fail:
		return fail(name, strings.Join(fixes, "; "), "%s", detail)
	case Warn:
		return warn(name, strings.Join(fixes, "; "), "%s", detail)
	}
	return ok(name, "%s", detail)
}

// judgeCharset fails a text column in a character set the router cannot
// convert to UTF-8.
func judgeCharset(c column) finding {
	if kindOf(c.dataType) != kindText || binlog.Convertible(c.charset) {
		return finding{status: OK}
	}
	return finding{status: Fail, detail: fmt.Sprintf("character set %s, which the router cannot convert to UTF-8", c.charset),
		fix: fmt.Sprintf("convert %s to utf8mb4 (ALTER TABLE ... MODIFY %s ... CHARACTER SET utf8mb4)", c.name, schema.QuoteIdentifier(c.name))}
}

var typeLength = regexp.MustCompile(`^[a-z]+\((\d+)\)`)

// length is the declared length of CHAR(n), BINARY(n) and the like; 0
// when the type has none.
func length(c column) int {
	m := typeLength.FindStringSubmatch(strings.ToLower(c.fullType))
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func unsupported(c column) finding {
	return finding{status: Fail, detail: "a type the router does not publish (the router stops at the first row)"}
}

func judgeEventID(c column, r valueRules) finding {
	noUUID := func(why string) finding {
		if !r.requireUUID {
			return finding{status: OK, detail: why + "; published as it is (--require-uuid=false)"}
		}
		return finding{status: Fail, detail: why + ", so --require-uuid refuses every row",
			fix: "make it CHAR(36) or BINARY(16), or run with --require-uuid=false"}
	}
	switch kindOf(c.dataType) {
	case kindText:
		if n := length(c); n > 0 && n < 36 {
			return noUUID(fmt.Sprintf("it holds at most %d characters, a UUID has 36", n))
		}
		return finding{status: OK, detail: "UUID text"}
	case kindUUID:
		if r.uuid == binlog.UUIDSwapped {
			return finding{status: Fail, detail: "MariaDB logs its UUID type in text order, and --uuid-binary-layout=swapped reads 16 bytes in MySQL's UUID_TO_BIN(x, 1) order",
				fix: "run with --uuid-binary-layout=standard"}
		}
		if !r.fullMetadata {
			return finding{status: Warn, detail: "MariaDB's UUID type, published as UUID text; the router's SQL parser does not know the type, so while binlog_row_metadata is not FULL a later CREATE or ALTER TABLE that spells it stops the router",
				fix: "SET GLOBAL binlog_row_metadata = 'FULL' " + myCnf}
		}
		return finding{status: OK, detail: "UUID text"}
	case kindBinary:
		n := length(c)
		switch {
		case c.dataType == "binary" && n != 16:
			return noUUID(fmt.Sprintf("it holds %d bytes, a binary UUID 16", n))
		case c.dataType == "varbinary" && n < 16:
			return noUUID(fmt.Sprintf("it holds at most %d bytes, a binary UUID 16", n))
		}
		return finding{status: OK, detail: fmt.Sprintf("16 bytes as UUID text in %s order (--uuid-binary-layout)", r.uuidOrder())}
	case kindInteger, kindDecimal:
		return noUUID("a number is not a UUID")
	}
	return unsupported(c)
}

func (r valueRules) uuidOrder() binlog.UUIDBinary {
	if r.uuid == "" {
		return binlog.UUIDStandard
	}
	return r.uuid
}

// judgeName: aggregate type and event type, used in topics and headers.
func judgeName(c column, _ valueRules) finding {
	switch kindOf(c.dataType) {
	case kindText:
		return finding{status: OK}
	case kindBinary, kindUUID, kindInteger, kindDecimal, kindJSON:
		return finding{status: Warn, detail: "unusual: published as text, its bytes as they are"}
	}
	return unsupported(c)
}

// judgeKey: the aggregate id, the record key.
func judgeKey(c column, _ valueRules) finding {
	switch kindOf(c.dataType) {
	case kindText:
		return finding{status: OK}
	case kindInteger, kindDecimal:
		return finding{status: OK, detail: "the key is its decimal text"}
	case kindBinary:
		return finding{status: OK, detail: "the key is its bytes"}
	case kindUUID:
		return finding{status: OK, detail: "the key is its 16 bytes"}
	case kindJSON:
		return finding{status: Warn, detail: "unusual: the key is its JSON text"}
	}
	return unsupported(c)
}

func judgePayload(c column, r valueRules) finding {
	switch kindOf(c.dataType) {
	case kindText, kindJSON:
		return finding{status: OK}
	case kindBinary:
		if r.validateJSON {
			return finding{status: Warn, detail: "the value is its bytes, and --validate-json refuses any that are not JSON in UTF-8",
				fix: "run with --validate-json=false if the payloads are not JSON"}
		}
		return finding{status: OK, detail: "the value is its bytes"}
	case kindInteger, kindDecimal:
		return finding{status: Warn, detail: "unusual: the value is its decimal text"}
	}
	return unsupported(c)
}

func judgeCreatedAt(c column, r valueRules) finding {
	switch {
	case c.dataType == "timestamp":
		return finding{status: OK, detail: "an instant: exact"}
	case c.dataType == "datetime" && r.zone == nil:
		return finding{status: Fail, detail: "a wall-clock time without a time zone, and the zone to read it in is not known: " + r.noZone,
			fix: "run with --datetime-zone set to the zone the application writes it in (Europe/Berlin, +05:00), or make it TIMESTAMP(6)"}
	case c.dataType == "datetime":
		return finding{status: OK, detail: "read in time zone " + r.zone.String()}
	case c.dataType == "bigint":
		return finding{status: OK, detail: "epoch milliseconds"}
	}
	return finding{status: Fail, detail: "the record timestamp comes from a TIMESTAMP, a DATETIME or a BIGINT of epoch milliseconds (the router stops at the first row)",
		fix: fmt.Sprintf("make %s TIMESTAMP(6), or set --column-created-at to a column name the table does not have, to take the commit time", schema.QuoteIdentifier(c.name))}
}

func judgeSchemaVersion(c column, _ valueRules) finding {
	switch kindOf(c.dataType) {
	case kindInteger, kindText:
		return finding{status: OK}
	case kindDecimal, kindBinary:
		return finding{status: Warn, detail: "unusual: published as its text or bytes"}
	}
	return unsupported(c)
}

func judgeText(c column, _ valueRules) finding {
	switch kindOf(c.dataType) {
	case kindText:
		return finding{status: OK}
	case kindBinary:
		return finding{status: Warn, detail: "unusual: published as its bytes"}
	}
	return unsupported(c)
}

func judgeHeaders(c column, _ valueRules) finding {
	switch kindOf(c.dataType) {
	case kindText, kindJSON:
		return finding{status: OK}
	case kindBinary:
		return finding{status: Warn, detail: "unusual: its bytes must be a JSON object in UTF-8"}
	}
	return unsupported(c)
}
