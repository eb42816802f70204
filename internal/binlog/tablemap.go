package binlog

import (
	"fmt"
	"strings"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlog-router/binlog-router/internal/schema"
)

// fullMetadataFix is the way out of every layout the router cannot know.
const fullMetadataFix = "set binlog_row_metadata=FULL on the server (SET PERSIST or the server's configuration) so that every row carries its own column names; rows written before that still need their layout: move the checkpoint past them with `binlog-router checkpoint set` and publish them with `binlog-router replay`, or from the table"

// checkTableMap compares a TABLE_MAP event with the tracked definition:
// the same number of columns, and each column of a type that the
// definition's data type is logged as. A data type the router does not
// know is not compared.
func checkTableMap(tm *replication.TableMapEvent, cols []schema.ColumnDef) error {
	if int(tm.ColumnCount) != len(cols) {
		return fmt.Errorf("the row has %d columns, the layout %d", tm.ColumnCount, len(cols))
	}
	for i, c := range cols {
		if i >= len(tm.ColumnType) {
			break
		}
		var meta uint16
		if i < len(tm.ColumnMeta) {
			meta = tm.ColumnMeta[i]
		}
		tp, meta := realType(tm.ColumnType[i], meta)
		want, blobLen, ok := loggedTypes(c.DataType)
		if !ok {
			continue
		}
		match := false
		for _, w := range want {
			match = match || w == tp
		}
		if match && blobLen != 0 && tp == gomysql.MYSQL_TYPE_BLOB && meta != blobLen {
			match = false
		}
		if !match {
			return fmt.Errorf("column %d (%s %s) is logged as type %d", i+1, c.Name, c.DataType, tp)
		}
	}
	return nil
}

// loggedTypes lists the binlog types a column of data type dt may be
// logged as, and for BLOB types the length of their length prefix.
func loggedTypes(dt string) (types []byte, blobLen uint16, ok bool) {
	switch dt {
	case "tinyint", "bool", "boolean":
		return []byte{gomysql.MYSQL_TYPE_TINY}, 0, true
	case "smallint":
		return []byte{gomysql.MYSQL_TYPE_SHORT}, 0, true
	case "mediumint":
		return []byte{gomysql.MYSQL_TYPE_INT24}, 0, true
	case "int", "integer":
		return []byte{gomysql.MYSQL_TYPE_LONG}, 0, true
	case "bigint":
		return []byte{gomysql.MYSQL_TYPE_LONGLONG}, 0, true
	case "decimal":
		return []byte{gomysql.MYSQL_TYPE_NEWDECIMAL}, 0, true
	case "float":
		return []byte{gomysql.MYSQL_TYPE_FLOAT}, 0, true
	case "double", "real":
		return []byte{gomysql.MYSQL_TYPE_DOUBLE}, 0, true
	case "varchar", "varbinary":
		return []byte{gomysql.MYSQL_TYPE_VARCHAR}, 0, true
	case "char", "binary":
		return []byte{gomysql.MYSQL_TYPE_STRING}, 0, true
	case "enum":
		return []byte{gomysql.MYSQL_TYPE_ENUM}, 0, true
	case "set":
		return []byte{gomysql.MYSQL_TYPE_SET}, 0, true
	case "tinytext", "tinyblob":
		return []byte{gomysql.MYSQL_TYPE_BLOB}, 1, true
	case "text", "blob":
		return []byte{gomysql.MYSQL_TYPE_BLOB}, 2, true
	case "mediumtext", "mediumblob":
		return []byte{gomysql.MYSQL_TYPE_BLOB}, 3, true
	case "longtext", "longblob":
		return []byte{gomysql.MYSQL_TYPE_BLOB}, 4, true
	case "json":
		return []byte{gomysql.MYSQL_TYPE_JSON, gomysql.MYSQL_TYPE_BLOB}, 0, true
	case "date":
		return []byte{gomysql.MYSQL_TYPE_DATE, gomysql.MYSQL_TYPE_NEWDATE}, 0, true
	case "datetime":
		return []byte{gomysql.MYSQL_TYPE_DATETIME2, gomysql.MYSQL_TYPE_DATETIME}, 0, true
	case "timestamp":
		return []byte{gomysql.MYSQL_TYPE_TIMESTAMP2, gomysql.MYSQL_TYPE_TIMESTAMP}, 0, true
	case "time":
		return []byte{gomysql.MYSQL_TYPE_TIME2, gomysql.MYSQL_TYPE_TIME}, 0, true
	case "year":
		return []byte{gomysql.MYSQL_TYPE_YEAR}, 0, true
	case "bit":
		return []byte{gomysql.MYSQL_TYPE_BIT}, 0, true
	}
	return nil, 0, false
}

func describeDefs(cols []schema.ColumnDef) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = c.Name + " " + c.DataType
	}
	return strings.Join(parts, ", ")
}

// missingMapped returns the first mapped column (an ordinal of l) absent
// from a rows event's bitmap of present columns, or -1.
func missingMapped(l *schema.Layout, present []byte) int {
	for _, ord := range []int{l.EventID, l.AggregateType, l.AggregateID, l.EventType, l.Payload,
		l.CreatedAt, l.SchemaVersion, l.Traceparent, l.Headers} {
		if ord >= 0 && (ord/8 >= len(present) || present[ord/8]&(1<<(ord%8)) == 0) {
			return ord
		}
	}
	return -1
}
