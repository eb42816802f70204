package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrNoGTIDs means a Debezium offset has no GTID set: binlog-router
// resumes by GTID only, never by binlog file and position.
var ErrNoGTIDs = errors.New("offset has no gtids")

// DebeziumOffset is the part of a Debezium MySQL (or MariaDB) connector
// offset that matters here.
type DebeziumOffset struct {
	GTIDs string `json:"gtids"` // GTID set of the transactions completed before the offset
	File  string `json:"file"`  // binlog file, information only
	Pos   int64  `json:"pos"`   // binlog position, information only
}

// ParseDebeziumOffset reads the value of a Debezium connector offset, as
// stored in the Kafka Connect offsets topic, e.g.
//
//	{"file":"mysql-bin.000003","pos":154,"gtids":"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5"}
//
// A two-element [key, value] array, as some tools print offset records, is
// accepted too. The GTID text is returned as stored (MySQL or MariaDB
// syntax); an offset without it gives an error wrapping ErrNoGTIDs.
//
// Debezium's gtids excludes the transaction it was in the middle of (it
// skips the events of that transaction it had already sent on restart);
// starting after gtids publishes that whole transaction, so some of its
// rows can repeat.
func ParseDebeziumOffset(text string) (DebeziumOffset, error) {
	raw := json.RawMessage(strings.TrimSpace(text))
	var pair []json.RawMessage
	if err := json.Unmarshal(raw, &pair); err == nil {
		if len(pair) != 2 {
			return DebeziumOffset{}, fmt.Errorf("parsing Debezium offset: an array must be [key, value], got %d elements", len(pair))
		}
		raw = pair[1]
	}
	var o DebeziumOffset
	if err := json.Unmarshal(raw, &o); err != nil {
		return DebeziumOffset{}, fmt.Errorf("parsing Debezium offset %s: %w; pass the offset value, a JSON object such as {\"file\":\"mysql-bin.000003\",\"pos\":154,\"gtids\":\"...\"}", truncate([]byte(text), 200), err)
	}
	o.GTIDs = strings.TrimSpace(o.GTIDs)
	if o.GTIDs == "" {
		where := ""
		if o.File != "" {
			where = fmt.Sprintf(" (it has file %q, pos %d)", o.File, o.Pos)
		}
		return o, fmt.Errorf("parsing Debezium offset: %w%s: binlog-router resumes by GTID only; find the GTID set at that position (MariaDB: SELECT BINLOG_GTID_POS('<file>', <pos>); MySQL: the Previous_gtids event of that file plus the GTIDs in it before that position, from SHOW BINLOG EVENTS IN '<file>') and use --gtid", ErrNoGTIDs, where)
	}
	return o, nil
}
