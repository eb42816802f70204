package validate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// The column types an outbox table has, judged with the flags given:
// "ready" only when the router publishes every row as the contract says.
func TestCheckTypes(t *testing.T) {
	base := map[string]string{"event_id": "event_id char(36)", "aggregate_type": "aggregate_type varchar(255)",
		"aggregate_id": "aggregate_id varchar(255)", "event_type": "event_type varchar(255)", "payload": "payload longtext",
		"created_at": "created_at timestamp(6)"}
	order := []string{"event_id", "aggregate_type", "aggregate_id", "event_type", "payload", "created_at"}
	noZone := defaultRules
	noZone.zone, noZone.noZone = nil, "the server's time_zone is SYSTEM and its system_time_zone \"CEST\" is an abbreviation"
	swapped, minimal, noUUID, noJSON := defaultRules, defaultRules, defaultRules, defaultRules
	swapped.uuid, minimal.fullMetadata, noUUID.requireUUID, noJSON.validateJSON = binlog.UUIDSwapped, false, false, false
	plus5 := defaultRules
	plus5.zone = time.FixedZone("+05:00", 5*3600)
	for _, tt := range []struct {
		name   string
		column string // replaces the column of its name
		rules  valueRules
		want   Status
		detail string
	}{
		{"CHAR(36)", "event_id char(36)", defaultRules, OK, "event_id char(36) (UUID text)"},
		{"VARCHAR", "event_id varchar(64)", defaultRules, OK, "UUID text"},
		{"CHAR(32) with --require-uuid", "event_id char(32)", defaultRules, Fail, "it holds at most 32 characters, a UUID has 36, so --require-uuid refuses every row"},
		{"CHAR(32) without", "event_id char(32)", noUUID, OK, "published as it is (--require-uuid=false)"},
		{"BINARY(16)", "event_id binary(16)", defaultRules, OK, "16 bytes as UUID text in standard order"},
		{"BINARY(16) swapped", "event_id binary(16)", swapped, OK, "in swapped order"},
		{"BINARY(20) with --require-uuid", "event_id binary(20)", defaultRules, Fail, "it holds 20 bytes, a binary UUID 16, so --require-uuid refuses every row"},
		{"BINARY(20) without", "event_id binary(20)", noUUID, OK, "published as it is"},
		{"VARBINARY(8)", "event_id varbinary(8)", defaultRules, Fail, "at most 8 bytes"},
		{"UUID", "event_id uuid", defaultRules, OK, "event_id uuid (UUID text)"},
		{"UUID swapped", "event_id uuid", swapped, Fail, "MariaDB logs its UUID type in text order"},
		{"UUID without FULL metadata", "event_id uuid", minimal, Warn, "binlog_row_metadata"},
		{"BIGINT event id", "event_id bigint(20)", defaultRules, Fail, "a number is not a UUID"},
		{"FLOAT event id", "event_id float", noUUID, Fail, "a type the router does not publish"},
		{"TINYINT aggregate id", "aggregate_id tinyint(4)", defaultRules, OK, "the key is its decimal text"},
		{"BIGINT UNSIGNED aggregate id", "aggregate_id bigint(20) unsigned", defaultRules, OK, "the key is its decimal text"},
		{"DECIMAL aggregate id", "aggregate_id decimal(20,4)", defaultRules, OK, "aggregate_id decimal(20,4) (the key is its decimal text)"},
		{"BINARY aggregate id", "aggregate_id binary(8)", defaultRules, OK, "the key is its bytes"},
		{"DOUBLE aggregate id", "aggregate_id double", defaultRules, Fail, "a type the router does not publish"},
		{"ENUM event type", "event_type enum('a','b')", defaultRules, Fail, "a type the router does not publish"},
		{"latin1 payload", "payload text latin1", defaultRules, OK, "payload text"},
		{"cp1250 payload", "payload text cp1250", defaultRules, OK, "payload text"},
		{"utf16 payload", "payload text utf16", defaultRules, OK, "payload text"},
		{"sjis payload", "payload text sjis", defaultRules, Fail, "character set sjis, which the router cannot convert to UTF-8"},
		{"JSON payload", "payload json", defaultRules, OK, "payload json"},
		{"BLOB payload with --validate-json", "payload blob", defaultRules, Warn, "--validate-json refuses any that are not JSON in UTF-8"},
		{"BLOB payload without", "payload blob", noJSON, OK, "the value is its bytes"},
		{"TIMESTAMP", "created_at timestamp(6)", defaultRules, OK, "an instant: exact"},
		{"DATETIME in the server's zone", "created_at datetime(6)", plus5, OK, "read in time zone +05:00"},
		{"DATETIME without a zone", "created_at datetime(6)", noZone, Fail, "the zone to read it in is not known"},
		{"BIGINT epoch", "created_at bigint(20)", defaultRules, OK, "epoch milliseconds"},
		{"VARCHAR created_at", "created_at varchar(32)", defaultRules, Fail, "the record timestamp comes from a TIMESTAMP"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cols := map[string]string{}
			for k, v := range base {
				cols[k] = v
			}
			info := table("shop.outbox", tt.column)
			cols[info.columns[0].name] = tt.column
			var list []string
			for _, n := range order {
				list = append(list, cols[n])
			}
			info = table("shop.outbox", list...)
			layout, err := schema.DefaultColumns().Resolve("shop.outbox", []string{"event_id", "aggregate_type", "aggregate_id", "event_type", "payload", "created_at"})
			require.NoError(t, err)
			c := checkTypes(info, layout, tt.rules)
			assert.Equal(t, tt.want, c.Status, c.String())
			assert.Contains(t, c.Detail, tt.detail)
			if tt.want != OK {
				assert.NotEmpty(t, c.Fix)
			}
		})
	}
}
