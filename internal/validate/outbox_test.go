package validate

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// table builds a tableInfo from "name type [charset]" pairs; string
// columns are utf8mb4 unless a character set is given.
func table(name string, cols ...string) tableInfo {
	t, _ := schema.ParseTableName(name)
	info := tableInfo{name: t, visible: true, kind: "BASE TABLE", engine: "InnoDB", probe: selectAllowed}
	for _, c := range cols {
		parts := strings.Fields(c)
		n, typ := parts[0], parts[1]
		dataType, _, _ := strings.Cut(typ, "(")
		cs := "utf8mb4"
		if len(parts) > 2 && parts[2] != "unsigned" {
			cs = parts[2]
		}
		if len(parts) > 2 && parts[2] == "unsigned" {
			typ += " unsigned"
		}
		info.columns = append(info.columns, column{name: n, dataType: dataType, fullType: typ, charset: schema.ColumnCharset(dataType, cs, "")})
	}
	return info
}

// defaultRules are the default flags on a server with FULL metadata whose
// time zone is UTC.
var defaultRules = valueRules{requireUUID: true, validateJSON: true, uuid: binlog.UUIDStandard, zone: time.UTC, fullMetadata: true}

var defaultTable = []string{"id bigint(20) unsigned", "event_id char(36)", "aggregate_type varchar(255)", "aggregate_id varchar(255)",
	"event_type varchar(255)", "payload longtext", "created_at timestamp(6)", "schema_version int(11)", "traceparent varchar(55)", "headers longtext"}

func TestValidateCheckTable(t *testing.T) {
	cols := schema.DefaultColumns()
	checks := checkTable(table("shop.outbox", defaultTable...), cols, gtid.MariaDB, "app@%", defaultRules)
	require.Len(t, checks, 2)
	assert.Equal(t, "OK   outbox table shop.outbox: InnoDB, 10 columns, every required outbox column found", checks[0].String())
	assert.Equal(t, OK, checks[1].Status, checks[1].String())
	assert.Contains(t, checks[1].Detail, "event_id char(36) (UUID text); aggregate_type varchar(255)")

	t.Run("every missing column is named", func(t *testing.T) {
		checks := checkTable(table("shop.thin", "id bigint", "event_id char(36)", "payload json"), cols, gtid.MySQL, "app@%", defaultRules)
		require.Len(t, checks, 1)
		c := checks[0]
		assert.Equal(t, Fail, c.Status)
		for _, w := range []string{`no column "aggregate_type" for the aggregate type`, `no column "aggregate_id" for the aggregate id`,
			`no column "event_type" for the event type`, "(it has: id, event_id, payload)"} {
			assert.Contains(t, c.Detail, w)
		}
		assert.Contains(t, c.Fix, "--column-aggregate-type, --column-aggregate-id, --column-event-type")
		assert.Contains(t, c.Fix, "binlog-router schema --flavor mysql --table shop.thin")
	})

	t.Run("optional columns absent", func(t *testing.T) {
		checks := checkTable(table("shop.outbox", defaultTable[:6]...), cols, gtid.MariaDB, "app@%", defaultRules)
		assert.Contains(t, checks[0].Detail, "optional created_at, schema_version, traceparent, headers absent (used once added)")
		assert.Equal(t, OK, checks[0].Status)
	})

	t.Run("debezium preset, matched case-insensitively", func(t *testing.T) {
		checks := checkTable(table("shop.outbox", "ID char(36)", "AggregateType varchar(255)", "AggregateId varchar(255)", "Type varchar(255)", "Payload json"),
			schema.DebeziumColumns(), gtid.MySQL, "app@%", defaultRules)
		require.Len(t, checks, 2)
		assert.Equal(t, OK, checks[0].Status, checks[0].String())
		assert.Equal(t, OK, checks[1].Status, checks[1].String())
	})

	t.Run("odd types", func(t *testing.T) {
		checks := checkTable(table("shop.odd", "event_id int(11)", "aggregate_type varchar(9)", "aggregate_id bigint(20)", "event_type varchar(9)",
			"payload decimal(10,2)", "created_at date"), cols, gtid.MariaDB, "app@%", defaultRules)
		c := checks[1]
		assert.Equal(t, Fail, c.Status)
		assert.Contains(t, c.Detail, "FAIL event_id (the event id) is int(11): a number is not a UUID, so --require-uuid refuses every row")
		assert.Contains(t, c.Detail, "WARN payload (the payload) is decimal(10,2): unusual: the value is its decimal text")
		assert.Contains(t, c.Detail, "FAIL created_at (the creation time) is date: the record timestamp comes from a TIMESTAMP, a DATETIME or a BIGINT")
		assert.Contains(t, c.Detail, "aggregate_id bigint(20) (the key is its decimal text)", "an integer aggregate id is fine")
		assert.Contains(t, c.Fix, "make it CHAR(36) or BINARY(16), or run with --require-uuid=false")
		assert.Contains(t, c.Fix, "ALTER TABLE `shop`.`odd` MODIFY `payload` JSON (MariaDB: LONGTEXT)")
		assert.Contains(t, c.Fix, "make `created_at` TIMESTAMP(6), or set --column-created-at to a column name the table does not have, to take the commit time")
	})

	t.Run("not InnoDB", func(t *testing.T) {
		info := table("shop.outbox", defaultTable...)
		info.engine = "MyISAM"
		c := checkTable(info, cols, gtid.MariaDB, "app@%", defaultRules)[0]
		assert.Equal(t, Warn, c.Status)
		assert.Equal(t, "ALTER TABLE `shop`.`outbox` ENGINE=InnoDB;", c.Fix)
	})

	for _, tt := range []struct {
		name string
		edit func(*tableInfo)
		want []string
	}{
		{"view", func(i *tableInfo) { i.kind = "VIEW" }, []string{"is a VIEW", "base table"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			info := table("shop.outbox", defaultTable...)
			tt.edit(&info)
			checks := checkTable(info, cols, gtid.MariaDB, "app@%", defaultRules)
			require.Len(t, checks, 1)
			assert.Equal(t, Fail, checks[0].Status)
			for _, w := range tt.want {
				assert.Contains(t, checks[0].String(), w)
			}
		})
	}
}
