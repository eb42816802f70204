package test

import (
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/test/harness"
)

// idKind is how an outbox table holds its event ids.
type idKind int

const (
	idText    idKind = iota // CHAR, VARCHAR: the UUID's text
	idBinary                // BINARY(16): UNHEX of the text (MySQL's UUID_TO_BIN(x))
	idSwapped               // BINARY(16) as MySQL's UUID_TO_BIN(x, 1) stores it
	idUUID                  // MariaDB's UUID type
)

// insert is the SQL expression that stores event id u.
func (k idKind) insert(u string) string {
	h := "REPLACE('" + u + "', '-', '')"
	switch k {
	case idBinary:
		return "UNHEX(" + h + ")"
	case idSwapped:
		return fmt.Sprintf("UNHEX(CONCAT(SUBSTR(%[1]s, 13, 4), SUBSTR(%[1]s, 9, 4), SUBSTR(%[1]s, 1, 8), SUBSTR(%[1]s, 17)))", h)
	}
	return "'" + u + "'"
}

// selectText is the SQL expression of what the record's id header must
// be: the column's text, or the UUID text of its 16 bytes (as MySQL's
// BIN_TO_UUID(x) and BIN_TO_UUID(x, 1) print it; MariaDB has neither).
func (k idKind) selectText() string {
	hex := func(from, n int) string { return fmt.Sprintf("SUBSTR(HEX(event_id), %d, %d)", from, n) }
	switch k {
	case idBinary:
		return "LOWER(CONCAT_WS('-', " + hex(1, 8) + ", " + hex(9, 4) + ", " + hex(13, 4) + ", " + hex(17, 4) + ", " + hex(21, 12) + "))"
	case idSwapped:
		return "LOWER(CONCAT_WS('-', " + hex(9, 8) + ", " + hex(5, 4) + ", " + hex(1, 4) + ", " + hex(17, 4) + ", " + hex(21, 12) + "))"
	}
	return "CAST(event_id AS CHAR)"
}

// valueTable is an outbox table of one combination of column types, and
// the rows the test writes into it.
type valueTable struct {
	name    string
	eventID string // the event id column's type
	ids     idKind
	text    string // the type of aggregate_type and event_type; default VARCHAR(64)
	aggID   string // the aggregate id column's type
	payload string // the payload column's type; default LONGTEXT
	options string // table options (DEFAULT CHARSET=...)
	group   string // the router that reads it: "" the default flags, else the group's flags
	rows    []valueRow
}

// valueRow is one row's values as SQL expressions; event_type is
// aggregate_type's text reversed so that the two differ.
type valueRow struct{ aggType, aggID, payload string }

func (vt valueTable) create() string {
	text, payload := vt.text, vt.payload
	if text == "" {
		text = "VARCHAR(64)"
	}
	if payload == "" {
		payload = "LONGTEXT"
	}
	return fmt.Sprintf("CREATE TABLE %s (seq BIGINT AUTO_INCREMENT PRIMARY KEY, event_id %s NOT NULL, aggregate_type %s NOT NULL, "+
		"aggregate_id %s NOT NULL, event_type %s NOT NULL, payload %s NULL) %s", vt.name, vt.eventID, text, vt.aggID, text, payload, vt.options)
}

// insert writes row r with a new event id; trailing zero bytes in every
// second id (the binlog strips them from a BINARY(16)).
func (vt valueTable) insert(t testing.TB, db *sql.DB, i int, r valueRow) {
	t.Helper()
	u := uuid.NewString()
	if i%2 == 1 {
		u = u[:28] + "00000000"
	}
	q := fmt.Sprintf("INSERT INTO %s (event_id, aggregate_type, aggregate_id, event_type, payload) VALUES (%s, %s, %s, REVERSE(%s), %s)",
		vt.name, vt.ids.insert(u), r.aggType, r.aggID, r.aggType, r.payload)
	_, err := db.Exec(q)
	require.NoError(t, err, q)
}

// Flags of the routers beyond the default ones.
const (
	groupSwapped = "--uuid-binary-layout=swapped"
	groupBytes   = "--validate-json=false"
)

var valueTables = []valueTable{
	// event ids, each with an aggregate id of an integer type
	{name: "t_char", eventID: "CHAR(36)", aggID: "TINYINT", rows: []valueRow{{"'order'", "-128", `'{"n":1,"name":"Zoë"}'`}, {"'order'", "127", "'[]'"}}},
	{name: "t_varchar", eventID: "VARCHAR(64)", aggID: "TINYINT UNSIGNED", rows: []valueRow{{"'order'", "255", "'{}'"}, {"'order'", "0", "'1'"}}},
	{name: "t_bin16", eventID: "BINARY(16)", ids: idBinary, aggID: "SMALLINT", rows: []valueRow{{"'order'", "-32768", "'{}'"}, {"'order'", "32767", "'{}'"}}},
	{name: "t_uuid", eventID: "UUID", ids: idUUID, aggID: "SMALLINT UNSIGNED", rows: []valueRow{{"'order'", "65535", "'{}'"}, {"'order'", "1", "'{}'"}}},
	{name: "t_swapped", eventID: "BINARY(16)", ids: idSwapped, aggID: "MEDIUMINT", group: groupSwapped,
		rows: []valueRow{{"'order'", "-8388608", "'{}'"}, {"'order'", "8388607", "'{}'"}}},
	// aggregate ids
	{name: "t_mediumint_u", eventID: "CHAR(36)", aggID: "MEDIUMINT UNSIGNED", rows: []valueRow{{"'order'", "16777215", "'{}'"}}},
	{name: "t_int", eventID: "CHAR(36)", aggID: "INT", rows: []valueRow{{"'order'", "-2147483648", "'{}'"}, {"'order'", "2147483647", "'{}'"}}},
	{name: "t_int_u", eventID: "CHAR(36)", aggID: "INT UNSIGNED", rows: []valueRow{{"'order'", "4294967295", "'{}'"}}},
	{name: "t_bigint", eventID: "CHAR(36)", aggID: "BIGINT", rows: []valueRow{{"'order'", "-9223372036854775808", "'{}'"}, {"'order'", "9223372036854775807", "'{}'"}}},
	{name: "t_bigint_u", eventID: "CHAR(36)", aggID: "BIGINT UNSIGNED", rows: []valueRow{{"'order'", "18446744073709551615", "'{}'"}, {"'order'", "9223372036854775808", "'{}'"}}},
	{name: "t_decimal", eventID: "CHAR(36)", aggID: "DECIMAL(30,4)", rows: []valueRow{{"'order'", "-12345678901234567890.1234", "'{}'"}, {"'order'", "0.5", "'{}'"}}},
	{name: "t_charid", eventID: "CHAR(36)", aggID: "CHAR(10)", rows: []valueRow{{"'order'", "'a'", "'{}'"}, {"'order'", "'ab c'", "'{}'"}}},
	{name: "t_varcharid", eventID: "CHAR(36)", aggID: "VARCHAR(255)", rows: []valueRow{{"'order'", "'ünïcode 注文 😀'", "'{}'"}}},
	{name: "t_binid", eventID: "CHAR(36)", aggID: "BINARY(8)", rows: []valueRow{{"'order'", "X'0102'", "'{}'"}, {"'order'", "X'00000000000000'", "'{}'"}}},
	{name: "t_varbinid", eventID: "CHAR(36)", aggID: "VARBINARY(20)", rows: []valueRow{{"'order'", "X'00FF00'", "'{}'"}, {"'order'", "X'FFFE'", "'{}'"}}},
	// payloads
	{name: "t_json", eventID: "CHAR(36)", aggID: "VARCHAR(64)", payload: "JSON", rows: []valueRow{{"'order'", "'a'", `'{"a": [1, 2.50], "é": "ü 😀"}'`}, {"'order'", "'b'", "NULL"}}},
	{name: "t_text", eventID: "CHAR(36)", aggID: "VARCHAR(64)", payload: "TEXT", rows: []valueRow{{"'order'", "'a'", `'{"text":"Grüße"}'`}}},
	{name: "t_blob", eventID: "CHAR(36)", aggID: "VARCHAR(64)", payload: "BLOB", rows: []valueRow{{"'order'", "'a'", `'{"blob":true}'`}}},
	{name: "t_bin8", eventID: "CHAR(36)", aggID: "VARCHAR(64)", payload: "BINARY(8)", group: groupBytes,
		rows: []valueRow{{"'order'", "'a'", "X'7B7D'"}, {"'order'", "'b'", "X'0001000000000000'"}}},
	// character sets: every text column of the table in it
	{name: "t_latin1", eventID: "CHAR(36)", aggID: "VARCHAR(64)", payload: "TEXT", options: "DEFAULT CHARSET=latin1",
		rows: []valueRow{{"'Café'", "'Müller'", `'{"name":"Café Müller"}'`}}},
	{name: "t_cp1250", eventID: "CHAR(36)", aggID: "VARCHAR(64)", payload: "TEXT", options: "DEFAULT CHARSET=cp1250",
		rows: []valueRow{{"'Žluťoučký'", "'kůň'", `'{"name":"Příliš žluťoučký kůň"}'`}}},
	{name: "t_utf16", eventID: "CHAR(36)", aggID: "VARCHAR(64)", payload: "TEXT", options: "DEFAULT CHARSET=utf16",
		rows: []valueRow{{"'Ž😀'", "'注文'", `'{"emoji":"😀","ž":"Ž"}'`}}},
	{name: "t_ucs2", eventID: "CHAR(36)", aggID: "VARCHAR(64)", payload: "TEXT", options: "DEFAULT CHARSET=ucs2",
		rows: []valueRow{{"'€uro'", "'Ωmega'", `'{"ucs2":"€ Ω 注"}'`}}},
	{name: "t_utf32", eventID: "CHAR(36)", aggID: "VARCHAR(64)", payload: "TEXT", options: "DEFAULT CHARSET=utf32",
		rows: []valueRow{{"'𝄞'", "'x'", `'{"utf32":"𝄞"}'`}}},
	{name: "t_uca1400", eventID: "CHAR(36)", aggID: "VARCHAR(64)", payload: "TEXT", options: "DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_uca1400_ai_ci",
		rows: []valueRow{{"'Größe'", "'注文'", `'{"uca1400":"😀"}'`}}},
}

// valueChanges run while the routers are down, each followed by a row of
// its table: a table converted to another character set, a column
// retyped to another, a table default changed and a column redefined
// without one (it takes the new default), columns added and reordered.
var valueChanges = []struct {
	table, ddl string
	row        valueRow
}{
	{"t_latin1", "ALTER TABLE t_latin1 CONVERT TO CHARACTER SET cp1250", valueRow{"'Café'", "'Müller'", `'{"after":"Müller"}'`}},
	{"t_cp1250", "ALTER TABLE t_cp1250 MODIFY payload TEXT CHARACTER SET utf16", valueRow{"'kůň'", "'Ž'", `'{"utf16":"Žluťoučký 😀"}'`}},
	{"t_utf16", "ALTER TABLE t_utf16 DEFAULT CHARSET=latin1, ADD COLUMN note VARCHAR(10) NULL FIRST", valueRow{"'Ž'", "'x'", `'{"n":1}'`}},
	{"t_latin1", "ALTER TABLE t_latin1 DEFAULT CHARSET=latin2", valueRow{"'Café'", "'Müller'", `'{"latin2":"ü"}'`}},
	{"t_latin1", "ALTER TABLE t_latin1 MODIFY aggregate_id VARCHAR(64) NOT NULL", valueRow{"'Müller'", "'Café'", `'{"aggregate_id":"latin2"}'`}},
	{"t_uuid", "ALTER TABLE t_uuid ADD COLUMN x INT NULL AFTER seq", valueRow{"'order'", "2", "'{}'"}},
	{"t_bigint_u", "ALTER TABLE t_bigint_u MODIFY aggregate_id BIGINT UNSIGNED NOT NULL AFTER seq", valueRow{"'order'", "18446744073709551614", "'{}'"}},
	{"t_uca1400", "ALTER TABLE t_uca1400 MODIFY payload TEXT CHARACTER SET utf16 COLLATE utf16_uca1400_as_cs", valueRow{"'Größe'", "'z'", `'{"utf16":"Größe 😀"}'`}},
}

// TestValuesAsSelectPrintsThem: outbox tables of every supported column
// type and character set, with binlog_row_metadata FULL, MINIMAL and
// NO_LOG. Rows written before and while the routers run, then, with the
// routers down, character sets and columns changed; after the restart a
// read_committed consumer must have, for every row, the key, value and
// headers that SELECT prints (the event id as UUID text), each once. The
// expected values come from the database itself.
func TestValuesAsSelectPrintsThem(t *testing.T) {
	for _, meta := range []string{"FULL", "MINIMAL", "NO_LOG"} {
		t.Run(meta, func(t *testing.T) {
			e := harness.NewEnv(t, harness.EnvOpts{Maria: devenv.MariaDBConfig{ExtraArgs: []string{"--binlog-row-metadata=" + meta}}})
			for _, vt := range valueTables {
				e.Exec(vt.create())
			}
			written := 0
			for _, vt := range valueTables {
				vt.insert(t, e.DB, 0, vt.rows[0])
				written++
			}
			c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
			routers := startValueRouters(t, e)
			for _, vt := range valueTables {
				for i, r := range vt.rows[1:] {
					vt.insert(t, e.DB, i+1, r)
					written++
				}
			}
			got := c.Read(written, 90*time.Second)
			requireAsSelected(t, e, got)
			for _, r := range routers {
				require.Equal(t, 0, r.Stop(20*time.Second))
			}

			byName := map[string]valueTable{}
			for _, vt := range valueTables {
				byName[vt.name] = vt
			}
			for i, ch := range valueChanges {
				e.Exec(ch.ddl)
				byName[ch.table].insert(t, e.DB, i, ch.row)
				written++
			}
			routers = startValueRouters(t, e)
			got = append(got, c.Read(written-len(got), 90*time.Second)...)
			requireAsSelected(t, e, got)
			assert.Empty(t, c.Quiet(time.Second), "no duplicate")
			for _, r := range routers {
				require.Equal(t, 0, r.Stop(20*time.Second))
			}
			t.Logf("binlog_row_metadata=%s: %d tables, %d rows, %d character set and column changes while down; every record as SELECT prints it",
				meta, len(valueTables), written, len(valueChanges))

			// validate says so too.
			for group, args := range valueRouterArgs(e) {
				v := runValidate(t, nil, args...)
				assert.Equal(t, 0, v.code, "validate for router %q", group)
				for _, vt := range valueTables {
					if vt.group == group {
						assert.NotEmpty(t, v.line("OK", "outbox column types shop."+vt.name)+v.line("WARN", "outbox column types shop."+vt.name), vt.name)
					}
				}
			}
		})
	}
}

// valueRouterArgs are the arguments of the router of each group, by
// group: its tables, a topic per table and its flags.
func valueRouterArgs(e *harness.Env) map[string][]string {
	out := map[string][]string{}
	for _, vt := range valueTables {
		if out[vt.group] == nil {
			name := map[string]string{"": "values", groupSwapped: "values-swapped", groupBytes: "values-bytes"}[vt.group]
			out[vt.group] = e.Args(name, "--topic-template", e.Prefix+".{table}")
			if vt.group != "" {
				out[vt.group] = append(out[vt.group], vt.group)
			}
		}
		out[vt.group] = append(out[vt.group], "--outbox-table", "shop."+vt.name)
	}
	return out
}

func startValueRouters(t *testing.T, e *harness.Env) []*harness.Router {
	var rs []*harness.Router
	for _, args := range valueRouterArgs(e) {
		rs = append(rs, harness.StartRouter(t, args...))
	}
	return rs
}

// requireAsSelected checks that got holds one record per row of every
// value table, whose id header, key, value, aggregate_type and
// event_type headers are what SELECT prints for the row.
func requireAsSelected(t *testing.T, e *harness.Env, got []*kgo.Record) {
	t.Helper()
	byID := map[string]*kgo.Record{}
	for _, rec := range got {
		id, _ := harness.Header(rec, "id")
		require.NotContains(t, byID, id, "record %q twice", id)
		byID[id] = rec
	}
	n := 0
	for _, vt := range valueTables {
		rows, err := e.DB.Query("SELECT " + vt.ids.selectText() + ", aggregate_type, aggregate_id, event_type, payload FROM " + vt.name + " ORDER BY seq")
		require.NoError(t, err)
		for rows.Next() {
			var id, aggType, aggID, eventType, payload []byte
			require.NoError(t, rows.Scan(&id, &aggType, &aggID, &eventType, &payload))
			n++
			rec, ok := byID[string(id)]
			if !assert.True(t, ok, "%s: no record with id %q", vt.name, id) {
				continue
			}
			where := fmt.Sprintf("%s row %s", vt.name, id)
			assert.Equal(t, e.Prefix+"."+vt.name, rec.Topic, where)
			assert.Equal(t, aggID, rec.Key, "%s: key", where)
			assert.Equal(t, payload, rec.Value, "%s: value", where)
			assert.Equal(t, payload == nil, rec.Value == nil, "%s: NULL payload, null value", where)
			h, _ := harness.Header(rec, "aggregate_type")
			assert.Equal(t, string(aggType), h, "%s: aggregate_type", where)
			h, _ = harness.Header(rec, "event_type")
			assert.Equal(t, string(eventType), h, "%s: event_type", where)
		}
		require.NoError(t, rows.Err())
	}
	assert.Equal(t, n, len(got), "one record per row")
}

// TestValuesTimeZone: a server whose time zone is +05:00, and created_at
// columns of each type. The record timestamp is the instant the value
// means: a TIMESTAMP and a BIGINT of epoch milliseconds exactly, a
// DATETIME read in the server's time zone, or in --datetime-zone. The
// expected instants come from the server (UNIX_TIMESTAMP, CONVERT_TZ).
func TestValuesTimeZone(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{Maria: devenv.MariaDBConfig{ExtraArgs: []string{"--default-time-zone=+05:00"}}})
	var zone string
	require.NoError(t, e.DB.QueryRow("SELECT @@global.time_zone").Scan(&zone))
	require.Equal(t, "+05:00", zone)
	tables := map[string]string{"ts_datetime": "DATETIME(6)", "ts_timestamp": "TIMESTAMP(6)", "ts_epoch": "BIGINT",
		"ts_datetime0": "DATETIME", "ts_datetime_m3": "DATETIME(6)"}
	values := []string{"'2026-03-01 12:34:56.789012'", "'1999-12-31 23:59:59.999'", "'2038-01-18 12:00:00'", "'1970-01-01 05:00:01'"}
	for name, typ := range tables {
		e.Exec(fmt.Sprintf("CREATE TABLE %s (seq BIGINT AUTO_INCREMENT PRIMARY KEY, event_id CHAR(36) NOT NULL, aggregate_type VARCHAR(64) NOT NULL, "+
			"aggregate_id VARCHAR(64) NOT NULL, event_type VARCHAR(64) NOT NULL, payload LONGTEXT NULL, created_at %s NOT NULL)", name, typ))
		for _, v := range values {
			if typ == "BIGINT" {
				v = "FLOOR(UNIX_TIMESTAMP(" + v + ") * 1000)"
			}
			e.Exec(fmt.Sprintf("INSERT INTO %s (event_id, aggregate_type, aggregate_id, event_type, payload, created_at) VALUES (UUID(), 'order', 'a', 'Placed', '{}', %s)", name, v))
		}
	}
	// The instant each row's created_at means: UNIX_TIMESTAMP reads a
	// DATETIME in the session's time zone, the server's.
	instants := func(table, expr string) map[string]int64 {
		rows, err := e.DB.Query("SELECT event_id, CAST(FLOOR(" + expr + ") AS SIGNED) FROM " + table)
		require.NoError(t, err)
		out := map[string]int64{}
		for rows.Next() {
			var id string
			var ms int64
			require.NoError(t, rows.Scan(&id, &ms))
			out[id] = ms
		}
		require.NoError(t, rows.Err())
		return out
	}
	check := func(name string, args []string, want map[string]int64) {
		t.Helper()
		c := harness.NewConsumer(t, e.Kafka.Brokers, "^"+e.Prefix+`\.`+name+"$")
		r := harness.StartRouter(t, append(e.Args(name+"-router", "--topic-template", e.Prefix+".{table}", "--outbox-table", "shop."+name), args...)...)
		got := c.Read(len(want), 60*time.Second)
		require.Len(t, got, len(want))
		for _, rec := range got {
			id, _ := harness.Header(rec, "id")
			ms, ok := want[id]
			require.True(t, ok, "record %s", id)
			assert.Equal(t, ms, rec.Timestamp.UnixMilli(), "%s row %s: record timestamp %s", name, id, rec.Timestamp.UTC())
		}
		require.Equal(t, 0, r.Stop(20*time.Second))
		t.Logf("%s %v: %d record timestamps exact", name, args, len(got))
	}
	for _, name := range []string{"ts_datetime", "ts_datetime0", "ts_timestamp"} {
		check(name, nil, instants(name, "UNIX_TIMESTAMP(created_at) * 1000"))
	}
	check("ts_epoch", nil, instants("ts_epoch", "created_at"))

	// DATETIMEs that an application writes in -03:00.
	check("ts_datetime_m3", []string{"--datetime-zone", "-03:00"},
		instants("ts_datetime_m3", "UNIX_TIMESTAMP(CONVERT_TZ(created_at, '-03:00', @@session.time_zone)) * 1000"))

	// validate names the zone it reads DATETIMEs in.
	v := runValidate(t, nil, e.Args("ts", "--outbox-table", "shop.ts_datetime")...)
	assert.Equal(t, 0, v.code)
	assert.Contains(t, v.line("OK", "outbox column types shop.ts_datetime"), "created_at datetime(6) (read in time zone +05:00)")
	v = runValidate(t, nil, e.Args("ts", "--outbox-table", "shop.ts_datetime", "--datetime-zone", "Europe/Berlin")...)
	assert.Contains(t, v.line("OK", "outbox column types shop.ts_datetime"), "created_at datetime(6) (read in time zone Europe/Berlin)")
}

// TestValuesRefused: a mapped column the router cannot publish exactly (a
// character set it does not convert, a type it does not publish) stops it
// before the first row, naming the column and the reason; nothing is
// committed, and validate fails the same column.
func TestValuesRefused(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{Maria: devenv.MariaDBConfig{ExtraArgs: []string{"--binlog-row-metadata=NO_LOG"}}})
	for _, tt := range []struct {
		table, columns, insert, want string
		args                         []string
	}{
		{"r_sjis", "payload TEXT CHARACTER SET sjis", "'{}'", "column payload (the payload) has character set sjis, which the router cannot convert to UTF-8", nil},
		{"r_float", "payload LONGTEXT, created_at TIMESTAMP NULL, schema_version FLOAT", "'{}'", "column schema_version (the schema version) is of type FLOAT, which the router does not publish",
			[]string{"--column-schema-version", "schema_version"}},
	} {
		t.Run(tt.table, func(t *testing.T) {
			e.Exec(fmt.Sprintf("CREATE TABLE %s (seq BIGINT AUTO_INCREMENT PRIMARY KEY, event_id CHAR(36) NOT NULL, aggregate_type VARCHAR(64) NOT NULL, "+
				"aggregate_id VARCHAR(64) NOT NULL, event_type VARCHAR(64) NOT NULL, %s) DEFAULT CHARSET=utf8mb4", tt.table, tt.columns))
			e.Exec(fmt.Sprintf("INSERT INTO %s (event_id, aggregate_type, aggregate_id, event_type, payload) VALUES (UUID(), 'order', 'a', 'Placed', %s)", tt.table, tt.insert))
			args := append(e.Args("refused-"+tt.table, "--topic-template", e.Prefix+".{table}", "--outbox-table", "shop."+tt.table), tt.args...)
			c := harness.NewConsumer(t, e.Kafka.Brokers, "^"+e.Prefix+`\.`+tt.table+"$")
			r := harness.StartRouter(t, args...)
			code := r.Wait(60 * time.Second)
			assert.Equal(t, 1, code)
			assert.Contains(t, r.Out.String(), tt.want)
			assert.Empty(t, c.Quiet(time.Second), "nothing committed")
			assert.Equal(t, "", e.CheckpointSet("refused-"+tt.table), "no checkpoint")
			v := runValidate(t, nil, args...)
			assert.Equal(t, 1, v.code)
			assert.NotEmpty(t, v.line("FAIL", "outbox column types shop."+tt.table))
			t.Logf("stop: %s", r.LogLine(tt.want))
		})
	}
}

// TestValuesSystemTimeZone: a server whose time_zone is SYSTEM, its host's
// zone Europe/Berlin, which system_time_zone names only as CET or CEST. The
// router cannot know the zone of a DATETIME created_at: it stops before
// the first row asking for --datetime-zone, and validate fails. With
// --datetime-zone Europe/Berlin every record timestamp is the instant the
// server's own UNIX_TIMESTAMP gives, in winter and in summer time.
func TestValuesSystemTimeZone(t *testing.T) {
	t.Setenv("TZ", "Europe/Berlin") // inherited by mariadbd
	e := harness.NewEnv(t, harness.EnvOpts{})
	var zone, system string
	require.NoError(t, e.DB.QueryRow("SELECT @@global.time_zone, @@global.system_time_zone").Scan(&zone, &system))
	require.Equal(t, "SYSTEM", zone)
	require.Contains(t, []string{"CET", "CEST"}, system)
	e.Exec("CREATE TABLE ts_system (seq BIGINT AUTO_INCREMENT PRIMARY KEY, event_id CHAR(36) NOT NULL, aggregate_type VARCHAR(64) NOT NULL, " +
		"aggregate_id VARCHAR(64) NOT NULL, event_type VARCHAR(64) NOT NULL, payload LONGTEXT NULL, created_at DATETIME(3) NOT NULL)")
	for _, v := range []string{"2026-01-15 12:00:00.250", "2026-07-15 12:00:00.500", "2026-03-29 01:59:59", "2026-03-29 03:00:00", "2026-10-25 03:30:00"} {
		e.Exec("INSERT INTO ts_system (event_id, aggregate_type, aggregate_id, event_type, payload, created_at) VALUES (UUID(), 'order', 'a', 'Placed', '{}', '" + v + "')")
	}
	args := e.Args("system", "--topic-template", e.Prefix+".{table}", "--outbox-table", "shop.ts_system")
	c := harness.NewConsumer(t, e.Kafka.Brokers, "^"+e.Prefix+`\.ts_system$`)

	r := harness.StartRouter(t, args...)
	assert.Equal(t, 1, r.Wait(60*time.Second))
	assert.Contains(t, r.Out.String(), "column created_at (the creation time) is a DATETIME, a wall-clock time without a time zone, and the server's time zone is not known (the server's time_zone is SYSTEM and its system_time_zone")
	assert.Contains(t, r.Out.String(), system+`\" is an abbreviation`)
	assert.Contains(t, r.Out.String(), "set --datetime-zone")
	assert.Empty(t, c.Quiet(time.Second), "nothing committed")
	v := runValidate(t, nil, args...)
	assert.Equal(t, 1, v.code)
	assert.Contains(t, v.line("FAIL", "outbox column types shop.ts_system"), "the zone to read it in is not known")

	rows, err := e.DB.Query("SELECT event_id, CAST(FLOOR(UNIX_TIMESTAMP(created_at) * 1000) AS SIGNED) FROM ts_system")
	require.NoError(t, err)
	wantMs := map[string]int64{}
	for rows.Next() {
		var id string
		var ms int64
		require.NoError(t, rows.Scan(&id, &ms))
		wantMs[id] = ms
	}
	require.NoError(t, rows.Err())
	r = harness.StartRouter(t, append(args, "--datetime-zone", "Europe/Berlin")...)
	got := c.Read(len(wantMs), 60*time.Second)
	for _, rec := range got {
		id, _ := harness.Header(rec, "id")
		assert.Equal(t, wantMs[id], rec.Timestamp.UnixMilli(), "row %s: %s", id, rec.Timestamp.UTC())
	}
	require.Equal(t, 0, r.Stop(20*time.Second))
	t.Logf("system_time_zone %s: stopped without --datetime-zone; with it, %d record timestamps as the server's UNIX_TIMESTAMP", system, len(got))
}
