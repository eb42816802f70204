package validate

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/schema"
)

func name(s string) schema.TableName {
	t, err := schema.ParseTableName(s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestMissingTableNearMisses(t *testing.T) {
	all := []schema.TableName{name("app.outbox_event"), name("app.orders"), name("billing.outbox_event"), name("ap.outbox_event"), name("app.OUTBOX_EVENT2")}
	for _, tt := range []struct {
		configured string
		want       []string
	}{
		{"app.outbox_evnt", []string{"app.outbox_event", "ap.outbox_event", "app.OUTBOX_EVENT2"}},                          // typos within two edits
		{"app.OUTBOX_EVENT", []string{"app.outbox_event", "billing.outbox_event", "ap.outbox_event", "app.OUTBOX_EVENT2"}}, // case, other databases
		{"shop.outbox_event", []string{"app.outbox_event", "billing.outbox_event", "ap.outbox_event"}},
		{"app.invoices", nil},
	} {
		info := tableInfo{name: name(tt.configured), missing: true}
		m := missingTable(info, all, gtid.MariaDB, "app@%")
		var got []string
		for _, n := range m.NearMisses {
			got = append(got, n.String())
		}
		assert.ElementsMatch(t, tt.want, got, tt.configured)
		assert.ErrorIs(t, m, ErrMissingTable)
		r := TableReport{Missing: []*MissingTableError{m}}
		require.Error(t, r.Err(false), tt.configured)
		assert.Contains(t, r.Err(false).Error(), "outbox table "+tt.configured)
		if len(tt.want) > 0 {
			assert.Error(t, r.Err(true), "--allow-missing-table never covers a near miss: %s", tt.configured)
			assert.Contains(t, r.Err(true).Error(), "correct --outbox-table")
		} else {
			assert.NoError(t, r.Err(true), tt.configured)
			assert.Contains(t, m.Error(), "binlog-router schema --flavor mariadb --table app.invoices")
		}
	}
	denied := missingTable(tableInfo{name: name("shop.outbox"), probe: selectDenied}, nil, gtid.MariaDB, "app@%")
	assert.Contains(t, denied.Error(), "not visible to app@%")
	assert.Equal(t, "GRANT SELECT ON `shop`.`outbox` TO 'app'@'%';", denied.fix())
	var g Guard
	g.Arm(TableReport{})
	assert.NoError(t, g.Rows("shop", "outbox2"), "nothing to guard when every table exists")
}

func TestGuard(t *testing.T) {
	g := &Guard{}
	assert.NoError(t, g.Rows("app", "outbox_events"), "not armed yet")
	g.Arm(TableReport{Missing: []*MissingTableError{{Table: name("app.outbox_event")}}})
	assert.NoError(t, g.Rows("app", "orders"))
	assert.NoError(t, g.Rows("app", "orders"), "cached as harmless")
	var nm *NearMissError
	require.ErrorAs(t, g.Rows("app", "outbox_events"), &nm)
	assert.Equal(t, name("app.outbox_events"), nm.Seen)
	assert.Contains(t, nm.Error(), "correct --outbox-table")
	assert.True(t, errors.Is(nm, ErrMissingTable))
	assert.Error(t, g.Rows("other", "outbox_event"), "same table in another database")

	for _, tt := range []struct {
		db, query string
		stop      bool
	}{
		{"app", "CREATE TABLE outbox_event (id INT)", false}, // the configured name itself: the migration
		{"app", "CREATE TABLE `Outbox_Event` (id INT)", true},
		{"app", "CREATE TABLE IF NOT EXISTS app.outbox_evnt (id INT)", true},
		{"other", "create table `app`.`outbox_evnt` like x", true},
		{"app", "RENAME TABLE tmp TO outbox_events", true},
		{"app", "ALTER TABLE tmp RENAME AS outboxevent", true},
		{"app", "INSERT INTO outbox_evnt VALUES ('outbox_event')", true},
		{"app", "CREATE TABLE orders (outbox_event_id INT, note VARCHAR(9) DEFAULT 'TABLE outbox_evnt')", false},
		{"app", "DROP TABLE orders", false},
	} {
		err := g.DDL(tt.db, tt.query)
		if tt.stop {
			assert.Error(t, err, tt.query)
		} else {
			assert.NoError(t, err, tt.query)
		}
	}
	var none *Guard
	assert.NoError(t, none.Rows("app", "outbox_evnt"))
	assert.NoError(t, none.DDL("app", "CREATE TABLE outbox_evnt (id INT)"))
}
