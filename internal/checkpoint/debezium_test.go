package checkpoint

import (
	"errors"
	"strings"
	"testing"
)

func TestParseDebeziumOffset(t *testing.T) {
	for _, tc := range []struct {
		name, offset, gtids, err string
	}{
		{"mysql", `{"file":"mysql-bin.000003","pos":154,"gtids":"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5"}`,
			"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5", ""},
		{"mariadb, more fields", ` {"ts_sec":1700000000,"file":"mariadb-bin.000001","pos":4,"gtids":"0-1-42,1-1-7","row":1,"event":2} `,
			"0-1-42,1-1-7", ""},
		{"key and value", `[["inventory",{"server":"dbserver1"}],{"file":"f","pos":4,"gtids":"0-1-3"}]`, "0-1-3", ""},
		{"no gtids", `{"file":"mysql-bin.000003","pos":154}`, "", `no gtids (it has file "mysql-bin.000003", pos 154): binlog-router resumes by GTID only`},
		{"empty gtids", `{"gtids":"  "}`, "", "no gtids"},
		{"not JSON", `mysql-bin.000003:154`, "", "parsing Debezium offset"},
		{"wrong array", `[1,2,3]`, "", "must be [key, value]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := ParseDebeziumOffset(tc.offset)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				if strings.Contains(tc.err, "no gtids") && !errors.Is(err, ErrNoGTIDs) {
					t.Fatalf("error %v does not wrap ErrNoGTIDs", err)
				}
				return
			}
			if err != nil || o.GTIDs != tc.gtids {
				t.Fatalf("got %q, %v; want %q", o.GTIDs, err, tc.gtids)
			}
		})
	}
}
