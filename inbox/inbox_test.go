package inbox

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

func TestIsMySQLPrimaryKeyConflict(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'c-e1' for key 'PRIMARY'"}, true},
		{&mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'c-e1' for key 'inbox.PRIMARY'"}, true},
		{fmt.Errorf("wrapped: %w", &mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'c-e1' for key 'PRIMARY'"}), true},
		{&mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'x' for key 'orders.PRIMARY'"}, false},
		{&mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'x' for key 'ref'"}, false},
		{&mysql.MySQLError{Number: 1213, Message: "Deadlock found when trying to get lock; try restarting transaction"}, false},
		{mysql.ErrInvalidConn, false},
		{errors.New("Duplicate entry for key 'PRIMARY'"), false},
	} {
		if got := isMySQLPrimaryKeyConflict(tc.err, "inbox"); got != tc.want {
			t.Errorf("isMySQLPrimaryKeyConflict(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	for n, want := range []time.Duration{1, 2, 4, 8, 16, 32, 60, 60} {
		want *= time.Second
		for range 50 {
			got := backoff(time.Second, 60*time.Second, n+1)
			if got < want/2 || got > want {
				t.Fatalf("backoff(attempt %d) = %v, want in [%v, %v]", n+1, got, want/2, want)
			}
		}
	}
}

func TestDDLAndTableNames(t *testing.T) {
	for _, d := range []Dialect{MySQL, PostgreSQL} {
		ddl, err := DDL(d, "app.inbox")
		if err != nil || !strings.Contains(ddl, "PRIMARY KEY (consumer_name, event_id)") {
			t.Errorf("DDL(%v) = %q, %v", d, ddl, err)
		}
		for _, bad := range []string{"a.b.c", "in box", "x`y", `x"y`, ""} {
			if bad == "" {
				continue
			}
			if _, err := DDL(d, bad); err == nil {
				t.Errorf("DDL(%v, %q) accepted", d, bad)
			}
		}
	}
}

func TestConfigValidate(t *testing.T) {
	_, err := New(Config{})
	if err == nil || !strings.Contains(err.Error(), "Brokers") || !strings.Contains(err.Error(), "Dialect") {
		t.Fatalf("New(Config{}) error %v, want one naming the missing fields", err)
	}
}
