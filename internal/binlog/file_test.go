package binlog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// These tests decode real MySQL 8 binlog files with ReadFile, because no
// MySQL 8 server can run on the test machines. The files live outside the
// repository, in ../shared/testdata/mysql8 from the project root; their
// README.md says what each holds. Every expected number below was measured
// in the file with go-mysql v1.16.0's BinlogParser.ParseFile (checksums off)
// and is asserted exactly.

// mysql8FixtureDir returns the folder of MySQL 8 binlog files, or skips the
// test when that folder is absent.
func mysql8FixtureDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	root := wd
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		require.NotEqual(t, root, parent, "no go.mod above %s: cannot find the project root", wd)
		root = parent
	}
	dir := filepath.Join(root, "..", "shared", "testdata", "mysql8")
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Skipf("MySQL 8 binlog fixture folder %s is absent (it is not part of the repository); put the real MySQL 8 binlog files there to run this test", dir)
	}
	return dir
}

// mysql8Fixture returns the path of one file of the fixture folder. A
// missing file in a present folder fails: it is not a reason to skip.
func mysql8Fixture(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(mysql8FixtureDir(t), name)
	_, err := os.Stat(path)
	require.NoError(t, err, "MySQL 8 binlog fixture file %s is missing from its folder", name)
	return path
}

// fileColumnSource answers column lists by "db.table" and records which
// tables it was asked about. A table it does not know is an error, so an
// unexpected lookup cannot go unnoticed.
type fileColumnSource struct {
	mu    sync.Mutex
	names map[string][]string
	asked map[string]bool
}

func newFileColumnSource(names map[string][]string) *fileColumnSource {
	return &fileColumnSource{names: names, asked: map[string]bool{}}
}

func (s *fileColumnSource) source(_ context.Context, database, table string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := database + "." + table
	s.asked[name] = true
	cols, ok := s.names[name]
	if !ok {
		return nil, fmt.Errorf("test column source: no columns for %s", name)
	}
	return cols, nil
}

func (s *fileColumnSource) tablesAsked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for name := range s.asked {
		out = append(out, name)
	}
	return out
}

// readFileBatches runs ReadFile and returns every batch it delivered, in
// order, along with its error.
func readFileBatches(t *testing.T, path string, cfg FileConfig) ([]Batch, error) {
	t.Helper()
	var batches []Batch
	err := ReadFile(context.Background(), path, cfg, func(b Batch) error {
		batches = append(batches, b)
		return nil
	})
	return batches, err
}

// batchShape is the number of rows of each batch; nil for no batch.
func batchShape(batches []Batch) []int {
	var shape []int
	for _, b := range batches {
		shape = append(shape, len(b.Rows))
	}
	return shape
}

func batchRows(batches []Batch) []OutboxRow {
	var rows []OutboxRow
	for _, b := range batches {
		for _, r := range b.Rows {
			r.Txn = nil // compared separately
			rows = append(rows, r)
		}
	}
	return rows
}

// fileBytes turns a string into a non-nil value; nil stays for NULL.
func fileBytes(s string) []byte { return []byte(s) }

// intTableNames are the columns of test.int_table (col1 tinyint, col2
// smallint, col3 mediumint, col4 int, col5 bigint, col6 tinyint(1)), which
// the TABLE_MAP events of the 8.2.0 files do not name.
var intTableNames = []string{"col1", "col2", "col3", "col4", "col5", "col6"}

// intTableColumns maps the integer columns to the required outbox fields;
// the optional fields are unused.
var intTableColumns = schema.Columns{
	EventID:       "col1",
	AggregateType: "col2",
	AggregateID:   "col3",
	EventType:     "col4",
	Payload:       "col5",
}

// intTableRow is the one row INSERTed in every 8.2.0 file:
// (1, 11, 111, 1111, 11111, 1), as decimal text.
var intTableRow = OutboxRow{
	Database:      "test",
	Table:         "int_table",
	EventID:       fileBytes("1"),
	AggregateType: fileBytes("11"),
	AggregateID:   fileBytes("111"),
	EventType:     fileBytes("1111"),
	Payload:       fileBytes("11111"),
}

// lineitemNames are the 16 columns of test.LINEITEM and of the last
// test.Demo, from the CREATE TABLE statements in mysql-8.0.31-mixed.bin.
var lineitemNames = []string{
	"L_ORDERKEY", "L_PARTKEY", "L_SUPPKEY", "L_LINENUMBER", "L_QUANTITY", "L_EXTENDEDPRICE",
	"L_DISCOUNT", "L_TAX", "L_RETURNFLAG", "L_LINESTATUS", "L_SHIPDATE", "L_COMMITDATE",
	"L_RECEIPTDATE", "L_SHIPINSTRUCT", "L_SHIPMODE", "L_COMMENT",
}

// lineitemColumns names the columns in lower case: Resolve must match them
// case-insensitively, as the server does.
var lineitemColumns = schema.Columns{
	EventID:       "l_orderkey",   // bigint
	AggregateType: "l_returnflag", // varchar
	AggregateID:   "l_partkey",    // int
	EventType:     "l_linestatus", // varchar(8), NULL in two Demo rows
	Payload:       "l_comment",    // varchar(128), NULL in every Demo row, UTF-8 text in one LINEITEM row
}

const lineitemChinese = "使用箭头标记 -> 不是 SQL 语句的一部分，它仅仅表示一个新行，如果一条 SQL 语句太长，我们可以通过回车键来创建一个新行来编写 SQL 语句，SQL 语句的命令结束符为分号 ;。"

func lineitemRow(table, orderKey, partKey string, lineStatus, comment []byte) OutboxRow {
	return OutboxRow{
		Database:      "test",
		Table:         table,
		EventID:       fileBytes(orderKey),
		AggregateType: fileBytes("code"),
		AggregateID:   fileBytes(partKey),
		EventType:     lineStatus,
		Payload:       comment,
	}
}

// mixedLineitemRows are the 6 rows INSERTed into test.LINEITEM, in binlog
// order: one transaction of 1 row, then one of 5.
var mixedLineitemRows = []OutboxRow{
	lineitemRow("LINEITEM", "1234567890111", "1235111", fileBytes("Y"), fileBytes("com")),
	lineitemRow("LINEITEM", "12345678909876", "12356789", fileBytes("Y"), fileBytes("com")),
	lineitemRow("LINEITEM", "12345678909877", "12356790", fileBytes("Y"), fileBytes("com")),
	lineitemRow("LINEITEM", "12345678909878", "12356791", fileBytes("Y"), fileBytes(lineitemChinese)),
	lineitemRow("LINEITEM", "12345678909879", "12356792", fileBytes("Y"), fileBytes("com")),
	lineitemRow("LINEITEM", "12345678909880", "12356792", fileBytes("Y"), fileBytes("com")),
}

// mixedDemoRows are the 5 rows INSERTed into test.Demo in one transaction,
// after it was created, re-created, dropped and created again. NULL
// columns must stay nil, not become empty strings.
var mixedDemoRows = []OutboxRow{
	lineitemRow("Demo", "12345678909876", "12356789", nil, nil),
	lineitemRow("Demo", "12345678909877", "12356790", fileBytes("Y"), nil),
	lineitemRow("Demo", "12345678909878", "12356791", nil, nil),
	lineitemRow("Demo", "12345678909879", "12356792", fileBytes("Y"), nil),
	lineitemRow("Demo", "12345678909880", "12356792", fileBytes("Y"), nil),
}

// TestReadFileMySQL8Anonymous decodes the MySQL 8 files written with
// gtid_mode OFF. Every transaction in them is anonymous: it is delivered
// (so a receiver sees every commit) but has no GTID and moves no GTID set.
func TestReadFileMySQL8Anonymous(t *testing.T) {
	intTable := schema.TableName{Database: "test", Table: "int_table"}
	lineitem := schema.TableName{Database: "test", Table: "LINEITEM"}
	demo := schema.TableName{Database: "test", Table: "Demo"}
	movies := schema.TableName{Database: "demo", Table: "movies"}
	intTableSource := map[string][]string{"test.int_table": intTableNames}

	tests := []struct {
		name     string
		file     string
		tables   []schema.TableName
		columns  schema.Columns
		names    map[string][]string // the ColumnSource's answers by db.table
		onUpdate UpdatePolicy

		// wantShape is the number of rows of each delivered batch; every
		// batch must end its transaction (no file has more rows in one
		// transaction than a batch holds).
		wantShape []int
		wantRows  []OutboxRow
		wantAsked []string // tables whose columns were read through the ColumnSource
		wantErr   error    // nil: ReadFile succeeds
		wantTable string   // the table the error names, in its text and in its *EventError
	}{
		{
			// 3 anonymous GTID events: CREATE TABLE test1, CREATE TABLE
			// int_table, then the INSERT transaction ended by the only XID.
			name:      "write rows",
			file:      "mysql-8.2.0-write-rows.bin",
			tables:    []schema.TableName{intTable},
			columns:   intTableColumns,
			names:     intTableSource,
			wantShape: []int{0, 0, 1},
			wantRows:  []OutboxRow{intTableRow},
			wantAsked: []string{"test.int_table"},
		},
		{
			// An optional field mapped to an existing column is filled.
			name:   "write rows with an optional column",
			file:   "mysql-8.2.0-write-rows.bin",
			tables: []schema.TableName{intTable},
			columns: func() schema.Columns {
				c := intTableColumns
				c.SchemaVersion = "COL6"
				return c
			}(),
			names:     intTableSource,
			wantShape: []int{0, 0, 1},
			wantRows: func() []OutboxRow {
				r := intTableRow
				r.SchemaVersion = fileBytes("1")
				return []OutboxRow{r}
			}(),
			wantAsked: []string{"test.int_table"},
		},
		{
			// 4 anonymous GTID events: DROP TABLE, CREATE TABLE, INSERT
			// (XID), UPDATE of 1 row (XID). The update is only counted.
			name:      "update rows, warn",
			file:      "mysql-8.2.0-update-rows.bin",
			tables:    []schema.TableName{intTable},
			columns:   intTableColumns,
			names:     intTableSource,
			onUpdate:  UpdateWarn,
			wantShape: []int{0, 0, 1, 0},
			wantRows:  []OutboxRow{intTableRow},
			wantAsked: []string{"test.int_table"},
		},
		{
			// The insert is delivered; the update stops the reading.
			name:      "update rows, fail",
			file:      "mysql-8.2.0-update-rows.bin",
			tables:    []schema.TableName{intTable},
			columns:   intTableColumns,
			names:     intTableSource,
			onUpdate:  UpdateFail,
			wantShape: []int{0, 0, 1},
			wantRows:  []OutboxRow{intTableRow},
			wantAsked: []string{"test.int_table"},
			wantErr:   ErrOutboxUpdate,
			wantTable: "test.int_table",
		},
		{
			// The default policy is warn.
			name:      "update rows, default policy",
			file:      "mysql-8.2.0-update-rows.bin",
			tables:    []schema.TableName{intTable},
			columns:   intTableColumns,
			names:     intTableSource,
			wantShape: []int{0, 0, 1, 0},
			wantRows:  []OutboxRow{intTableRow},
			wantAsked: []string{"test.int_table"},
		},
		{
			// 5 anonymous GTID events: DROP, CREATE, INSERT, UPDATE,
			// DELETE. The DELETE transaction is delivered without rows.
			name:      "delete rows, warn",
			file:      "mysql-8.2.0-delete-rows.bin",
			tables:    []schema.TableName{intTable},
			columns:   intTableColumns,
			names:     intTableSource,
			onUpdate:  UpdateWarn,
			wantShape: []int{0, 0, 1, 0, 0},
			wantRows:  []OutboxRow{intTableRow},
			wantAsked: []string{"test.int_table"},
		},
		{
			name:      "delete rows, fail",
			file:      "mysql-8.2.0-delete-rows.bin",
			tables:    []schema.TableName{intTable},
			columns:   intTableColumns,
			names:     intTableSource,
			onUpdate:  UpdateFail,
			wantShape: []int{0, 0, 1},
			wantRows:  []OutboxRow{intTableRow},
			wantAsked: []string{"test.int_table"},
			wantErr:   ErrOutboxUpdate,
			wantTable: "test.int_table",
		},
		{
			// Rows of a table that is not an outbox table are never
			// decoded and never delivered, and its columns are never asked.
			name:      "write rows, other table",
			file:      "mysql-8.2.0-delete-rows.bin",
			tables:    []schema.TableName{{Database: "test", Table: "test1"}},
			columns:   intTableColumns,
			onUpdate:  UpdateFail,
			wantShape: []int{0, 0, 0, 0, 0},
		},
		{
			// README: 15 rows = WriteRowsV2 x3 + UpdateRowsV2 x1 +
			// DeleteRowsV2 x2. go-mysql counts an updated row twice
			// (before and after image): the one UPDATE event holds 2, each
			// DELETE event 1, so 15 - 2 - 1 - 1 = 11 rows were INSERTed:
			// 1 + 5 into LINEITEM and 5 into Demo. The 11 anonymous GTID
			// events are 11 transactions: CREATE LINEITEM, INSERT 1,
			// INSERT 5, UPDATE, DELETE, DELETE, CREATE Demo twice, DROP
			// Demo, CREATE Demo, INSERT 5 into Demo.
			name:      "mixed DML and DDL",
			file:      "mysql-8.0.31-mixed.bin",
			tables:    []schema.TableName{lineitem, demo},
			columns:   lineitemColumns,
			names:     map[string][]string{"test.LINEITEM": lineitemNames, "test.Demo": lineitemNames},
			wantShape: []int{0, 1, 5, 0, 0, 0, 0, 0, 0, 0, 5},
			wantRows:  append(append([]OutboxRow{}, mixedLineitemRows...), mixedDemoRows...),
			wantAsked: []string{"test.LINEITEM", "test.Demo"},
		},
		{
			name:      "mixed DML and DDL, LINEITEM only",
			file:      "mysql-8.0.31-mixed.bin",
			tables:    []schema.TableName{lineitem},
			columns:   lineitemColumns,
			names:     map[string][]string{"test.LINEITEM": lineitemNames},
			wantShape: []int{0, 1, 5, 0, 0, 0, 0, 0, 0, 0, 0},
			wantRows:  mixedLineitemRows,
			wantAsked: []string{"test.LINEITEM"},
		},
		{
			// One anonymous transaction whose BEGIN, TABLE_MAP, UPDATE of
			// demo.movies (2 images = 1 row) and XID are all inside one
			// zstd TRANSACTION_PAYLOAD event. Failing on the update proves
			// the inner events reach the stream; it comes before the XID,
			// so no batch is delivered.
			name:      "compressed payload, outbox update fails",
			file:      "mysql-8.0.28-compressed.bin",
			tables:    []schema.TableName{movies},
			columns:   schema.DefaultColumns(),
			onUpdate:  UpdateFail,
			wantErr:   ErrOutboxUpdate,
			wantTable: "demo.movies",
		},
		{
			// The XID inside the payload ends the transaction.
			name:      "compressed payload, outbox update warns",
			file:      "mysql-8.0.28-compressed.bin",
			tables:    []schema.TableName{movies},
			columns:   schema.DefaultColumns(),
			onUpdate:  UpdateWarn,
			wantShape: []int{0},
		},
		{
			name:      "compressed payload, other table",
			file:      "mysql-8.0.28-compressed.bin",
			tables:    []schema.TableName{{Database: "demo", Table: "outbox"}},
			columns:   schema.DefaultColumns(),
			onUpdate:  UpdateFail,
			wantShape: []int{0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := newFileColumnSource(tt.names)
			batches, err := readFileBatches(t, mysql8Fixture(t, tt.file), FileConfig{
				Flavor:   gtid.MySQL,
				Tables:   tt.tables,
				Columns:  tt.columns,
				OnUpdate: tt.onUpdate,
				Source:   src.source,
			})
			if tt.wantErr != nil {
				require.Error(t, err)
				require.ErrorIs(t, err, tt.wantErr)
				require.Contains(t, err.Error(), tt.wantTable)
				var rowErr *EventError
				require.ErrorAs(t, err, &rowErr)
				require.Equal(t, tt.wantTable, rowErr.Table)
			} else {
				require.NoError(t, err)
			}

			require.Equal(t, tt.wantShape, batchShape(batches), "rows per batch")
			require.Equal(t, tt.wantRows, batchRows(batches))
			require.ElementsMatch(t, tt.wantAsked, src.tablesAsked(), "tables whose columns were read")

			set := gtid.New(gtid.MySQL)
			for i, b := range batches {
				assert.True(t, len(b.Done) == 1 && !b.Open, "batch %d ends its transaction", i)
				assert.False(t, b.Heartbeat, "batch %d", i)
				require.NotNil(t, b.Done[0], "batch %d", i)
				assert.Empty(t, b.Done[0].GTID, "batch %d: anonymous transaction", i)
				for _, r := range b.Rows {
					assert.Same(t, b.Done[0], r.Txn, "batch %d: a row carries its transaction", i)
				}
				assert.False(t, b.Done[0].Time.IsZero(), "batch %d: commit time", i)
				b.Done[0].AddTo(set)
			}
			require.True(t, set.IsEmpty(), "anonymous transactions add nothing, got %q", set.String())
		})
	}
}

// TestReadFileMySQL8GTIDs decodes 418 real GTID_LOG_EVENTs (server UUID
// 3e11fa47-71ca-11e1-9e33-c80aa9429562, GNO 1..418) of a file without an
// outbox table: every transaction is delivered, empty, in order.
func TestReadFileMySQL8GTIDs(t *testing.T) {
	const uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	// 418 transactions: 140 DDL statements, each its own transaction, and
	// 278 BEGIN ... UPDATE ... XID transactions (one with two UPDATE
	// events); 418 = 140 + 278, as measured with go-mysql.
	const transactions = 418
	tests := []struct {
		name   string
		tables []schema.TableName
	}{
		{"no such table", []schema.TableName{{Database: "nosuch", Table: "outbox"}}},
		// The only table with rows: its UPDATEs are skipped under warn.
		{"updated table", []schema.TableName{{Database: "hdb_meta", Table: "table_usage"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := newFileColumnSource(nil)
			batches, err := readFileBatches(t, mysql8Fixture(t, "mysql-8.0.31-gtid-418-transactions.bin"), FileConfig{
				Flavor:   gtid.MySQL,
				Tables:   tt.tables,
				Columns:  schema.DefaultColumns(),
				OnUpdate: UpdateWarn,
				Source:   src.source,
			})
			require.NoError(t, err)
			require.Len(t, batches, transactions)
			require.Empty(t, src.tablesAsked())

			set := gtid.New(gtid.MySQL)
			for i, b := range batches {
				require.True(t, len(b.Done) == 1 && !b.Open, "batch %d ends its transaction", i)
				require.NotNil(t, b.Done[0], "batch %d", i)
				require.Empty(t, b.Rows, "batch %d", i)
				require.Equal(t, uuid+":"+strconv.Itoa(i+1), b.Done[0].GTID, "batch %d", i)
				require.False(t, b.Done[0].Time.IsZero(), "batch %d: commit time", i)
				b.Done[0].AddTo(set)
			}
			require.Equal(t, uuid+":1-418", set.String())
		})
	}
}

// TestReadFileMySQL8Unmappable checks that an INSERT into an outbox table
// whose columns cannot be mapped stops ReadFile with ErrUnmappable naming
// the table: the row is never skipped.
func TestReadFileMySQL8Unmappable(t *testing.T) {
	intTable := schema.TableName{Database: "test", Table: "int_table"}
	tests := []struct {
		name     string
		columns  schema.Columns
		source   ColumnSource
		wantText []string
	}{
		{
			name:    "fewer names than the TABLE_MAP has columns",
			columns: intTableColumns,
			source: func(context.Context, string, string) ([]string, error) {
				return intTableNames[:5], nil
			},
			wantText: []string{"6 columns", "has 5"},
		},
		{
			name:    "more names than the TABLE_MAP has columns",
			columns: intTableColumns,
			source: func(context.Context, string, string) ([]string, error) {
				return append(append([]string{}, intTableNames...), "col7"), nil
			},
			wantText: []string{"6 columns", "has 7"},
		},
		{
			name: "required column missing",
			columns: func() schema.Columns {
				c := intTableColumns
				c.Payload = "payload"
				return c
			}(),
			source: func(context.Context, string, string) ([]string, error) {
				return intTableNames, nil
			},
			wantText: []string{`"payload"`, "--column-payload"},
		},
		{
			name:    "column source fails",
			columns: intTableColumns,
			source: func(context.Context, string, string) ([]string, error) {
				return nil, errors.New("information_schema unavailable")
			},
			wantText: []string{"information_schema unavailable"},
		},
		{
			name:     "no column source",
			columns:  intTableColumns,
			wantText: []string{"binlog_row_metadata"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			batches, err := readFileBatches(t, mysql8Fixture(t, "mysql-8.2.0-write-rows.bin"), FileConfig{
				Flavor:  gtid.MySQL,
				Tables:  []schema.TableName{intTable},
				Columns: tt.columns,
				Source:  tt.source,
			})
			require.Error(t, err)
			require.ErrorIs(t, err, ErrUnmappable)
			require.Contains(t, err.Error(), "test.int_table")
			for _, s := range tt.wantText {
				require.Contains(t, err.Error(), s)
			}
			var rowErr *EventError
			require.ErrorAs(t, err, &rowErr)
			require.Equal(t, "test.int_table", rowErr.Table)

			// The two DDL transactions before the INSERT were delivered;
			// the INSERT's transaction was not, neither whole nor in part.
			require.Equal(t, []int{0, 0}, batchShape(batches))
		})
	}
}
