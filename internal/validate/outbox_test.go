package validate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// table builds a tableInfo from "name type" pairs.
func table(name string, cols ...string) tableInfo {
	t, _ := schema.ParseTableName(name)
	info := tableInfo{name: t, visible: true, kind: "BASE TABLE", engine: "InnoDB", probe: selectAllowed}
	for _, c := range cols {
		n, typ, _ := strings.Cut(c, " ")
		dataType, _, _ := strings.Cut(typ, "(")
		info.columns = append(info.columns, column{name: n, dataType: dataType, fullType: typ})
	}
	return info
}

var defaultTable = []string{"id bigint(20) unsigned", "event_id char(36)", "aggregate_type varchar(255)", "aggregate_id varchar(255)",
	"event_type varchar(255)", "payload longtext", "created_at timestamp(6)", "schema_version int(11)", "traceparent varchar(55)", "headers longtext"}

func TestValidateCheckTable(t *testing.T) {
	cols := schema.DefaultColumns()
	checks := checkTable(table("shop.outbox", defaultTable...), cols, gtid.MariaDB, "app@%")
	require.Len(t, checks, 2)
	assert.Equal(t, "OK   outbox table shop.outbox: InnoDB, 10 columns, every required outbox column found", checks[0].String())
	assert.Equal(t, OK, checks[1].Status, checks[1].String())
	assert.Contains(t, checks[1].Detail, "event_id char(36), aggregate_type varchar(255)")

	t.Run("every missing column is named", func(t *testing.T) {
		checks := checkTable(table("shop.thin", "id bigint", "event_id char(36)", "payload json"), cols, gtid.MySQL, "app@%")
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
		checks := checkTable(table("shop.outbox", defaultTable[:6]...), cols, gtid.MariaDB, "app@%")
		assert.Contains(t, checks[0].Detail, "optional created_at, schema_version, traceparent, headers absent (used once added)")
		assert.Equal(t, OK, checks[0].Status)
	})

	t.Run("debezium preset, matched case-insensitively", func(t *testing.T) {
		checks := checkTable(table("shop.outbox", "ID char(36)", "AggregateType varchar(255)", "AggregateId varchar(255)", "Type varchar(255)", "Payload json"),
			schema.DebeziumColumns(), gtid.MySQL, "app@%")
		require.Len(t, checks, 2)
		assert.Equal(t, OK, checks[0].Status, checks[0].String())
		assert.Equal(t, OK, checks[1].Status, checks[1].String())
	})

	t.Run("odd types warn", func(t *testing.T) {
		checks := checkTable(table("shop.odd", "event_id int(11)", "aggregate_type varchar(9)", "aggregate_id bigint(20)", "event_type varchar(9)",
			"payload decimal(10,2)", "created_at date"), cols, gtid.MariaDB, "app@%")
		c := checks[1]
		assert.Equal(t, Warn, c.Status)
		assert.Contains(t, c.Detail, "event_id (the event id) is int(11); payload (the payload) is decimal(10,2); created_at (the creation time) is date")
		assert.NotContains(t, c.Detail, "aggregate_id", "an integer aggregate id is fine")
		assert.Contains(t, c.Fix, "ALTER TABLE `shop`.`odd` MODIFY `event_id` CHAR(36), MODIFY `payload` JSON (MariaDB: LONGTEXT), MODIFY `created_at` TIMESTAMP(6)")
	})

	t.Run("not InnoDB", func(t *testing.T) {
		info := table("shop.outbox", defaultTable...)
		info.engine = "MyISAM"
		c := checkTable(info, cols, gtid.MariaDB, "app@%")[0]
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
			checks := checkTable(info, cols, gtid.MariaDB, "app@%")
			require.Len(t, checks, 1)
			assert.Equal(t, Fail, checks[0].Status)
			for _, w := range tt.want {
				assert.Contains(t, checks[0].String(), w)
			}
		})
	}
}
