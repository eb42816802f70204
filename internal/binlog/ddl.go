package binlog

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // value expressions (DEFAULT 'x') need a driver
	"github.com/pingcap/tidb/pkg/parser/types"

	"github.com/binlog-router/binlog-router/internal/schema"
)

// definitions tracks the definitions of the outbox tables while the
// binlog is read without column names in TABLE_MAP events: each DDL
// statement of the binlog is applied to them, so that a row is decoded
// with the definition in force when it was written: its columns' names,
// types, character sets and signs, and the table's default character set.
// A table whose definition is not known (no columns) cannot have its rows
// decoded; why says why, for the error.
type definitions struct {
	outbox outboxSet
	parser *parser.Parser
	cols   map[string]schema.TableDef // db.table -> definition; absent or without columns: unknown
	why    map[string]string          // db.table -> why unknown
	snap   map[string]schema.TableDef // the known definitions, shared read-only; nil after a change
}

func newDefinitions(outbox outboxSet) *definitions {
	return &definitions{outbox: outbox, parser: parser.New(),
		cols: map[string]schema.TableDef{}, why: map[string]string{}}
}

// known returns name's definition and whether it is known.
func (d *definitions) known(name string) (schema.TableDef, bool) {
	def := d.cols[name]
	return def, def.Columns != nil
}

func (d *definitions) set(name string, def schema.TableDef) {
	d.cols[name] = def
	delete(d.why, name)
	d.snap = nil
}

func (d *definitions) forget(name, why string) {
	d.cols[name] = schema.TableDef{}
	d.why[name] = why
	d.snap = nil
}

// snapshot returns the known definitions as an immutable map, shared
// until the next change.
func (d *definitions) snapshot() map[string]schema.TableDef {
	if d.snap == nil {
		d.snap = map[string]schema.TableDef{}
		for name, def := range d.cols {
			if def.Columns != nil {
				d.snap[name] = def
			}
		}
	}
	return d.snap
}

// errUncertainDDL is wrapped by the error for a DDL statement that touches
// an outbox table and that the router cannot apply with certainty to the
// table's definition.
var errUncertainDDL = fmt.Errorf("%w: a DDL statement changed the table in a way the router cannot follow", ErrUnmappable)

// ddlResult is what one query event means for the outbox tables.
type ddlResult struct {
	touched   []string // outbox tables whose definition the statement changed (or may have)
	statement string   // "INSERT" etc. when the query writes an outbox table as a statement (binlog_format not ROW)
	written   string   // the outbox table it writes
}

// tableRef names a table of a statement, with the query's default
// database for an unqualified name.
func tableRef(t *ast.TableName, defaultDB string) (db, table string) {
	db = t.Schema.O
	if db == "" {
		db = defaultDB
	}
	return db, t.Name.O
}

// outboxName returns the configured name a table reference denotes, and
// whether it matches only when letter case is ignored (a server with
// lower_case_table_names may mean it, or may not).
func (d *definitions) outboxName(db, table string) (name string, exact, folded bool) {
	if _, ok := d.outbox[db][table]; ok {
		return db + "." + table, true, false
	}
	for odb, tables := range d.outbox {
		for ot := range tables {
			if strings.EqualFold(odb, db) && strings.EqualFold(ot, table) {
				return odb + "." + ot, false, true
			}
		}
	}
	return "", false, false
}

// apply parses query (run with default database defaultDB) and applies
// each of its statements to the definitions. A statement touching an
// outbox table that cannot be applied with certainty leaves that table's
// definition unknown and, when it was known, returns an error wrapping
// errUncertainDDL: rows after it cannot be decoded.
func (d *definitions) apply(query, defaultDB string) (ddlResult, error) {
	var res ddlResult
	stmts, err := parseDDL(d.parser, query)
	if err != nil {
		// The statement names an outbox table (the caller checked) but is
		// not understood: every outbox table it may name is uncertain.
		q := strings.ToLower(query)
		for db, tables := range d.outbox {
			for t := range tables {
				if strings.Contains(q, strings.ToLower(t)) {
					if e := d.uncertain(db+"."+t, fmt.Sprintf("the statement could not be parsed (%v)", err)); e != nil {
						return res, e
					}
					res.touched = append(res.touched, db+"."+t)
				}
			}
		}
		return res, nil
	}
	for _, st := range stmts {
		if err := d.statement(st, defaultDB, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// uncertain forgets name's definition; an error if it was known.
func (d *definitions) uncertain(name, why string) error {
	_, known := d.known(name)
	d.forget(name, why)
	if known {
		return fmt.Errorf("%w: %s", errUncertainDDL, why)
	}
	return nil
}

func (d *definitions) statement(st ast.StmtNode, defaultDB string, res *ddlResult) error {
	ref := func(t *ast.TableName) (string, bool, error) {
		db, tbl := tableRef(t, defaultDB)
		name, exact, folded := d.outboxName(db, tbl)
		switch {
		case exact:
			res.touched = append(res.touched, name)
			return name, true, nil
		case folded:
			res.touched = append(res.touched, name)
			return name, false, d.uncertain(name, fmt.Sprintf("the statement names %s.%s, which differs from the outbox table only in letter case", db, tbl))
		}
		return "", false, nil
	}
	switch s := st.(type) {
	case *ast.InsertStmt:
		if s.Table == nil {
			return nil
		}
		for _, t := range tablesOf(s.Table.TableRefs) {
			if _, ok, err := ref(t); err != nil || ok {
				res.written = res.touched[len(res.touched)-1]
				res.touched = res.touched[:len(res.touched)-1] // a write, not a definition change
				res.statement = "INSERT"
				if s.IsReplace {
					res.statement = "REPLACE"
				}
				return err
			}
		}
	case *ast.LoadDataStmt:
		if _, ok, err := ref(s.Table); err != nil || ok {
			res.written = res.touched[len(res.touched)-1]
			res.touched = res.touched[:len(res.touched)-1]
			res.statement = "LOAD DATA"
			return err
		}
	case *ast.CreateTableStmt:
		name, ok, err := ref(s.Table)
		if err != nil || !ok {
			return err
		}
		if national.MatchString(s.Text()) {
			return d.uncertain(name, "a NATIONAL character column (utf8mb3) was defined, whose character set the parser does not keep")
		}
		if s.TemporaryKeyword != ast.TemporaryNone {
			// A temporary table hides the real one in its session only,
			// and the router cannot tell which session wrote a row.
			return d.uncertain(name, "a TEMPORARY table of the same name was created")
		}
		if _, known := d.known(name); s.IfNotExists && known {
			return nil // it exists: the statement did nothing
		}
		if s.ReferTable != nil || s.Select != nil || len(s.Cols) == 0 {
			return d.uncertain(name, "it was created with CREATE TABLE ... LIKE or ... SELECT, whose columns the binlog does not spell out")
		}
		if s.IfNotExists {
			// Unknown whether it existed before: the statement may have
			// done nothing.
			return d.uncertain(name, "CREATE TABLE IF NOT EXISTS on a table whose definition was not known")
		}
		// Without a character set of its own the table takes its
		// database's default, which is not tracked: columns without one
		// of their own then have none known.
		def := schema.TableDef{Charset: tableCharset(s.Options, ""), Columns: make([]schema.ColumnDef, 0, len(s.Cols))}
		for _, c := range s.Cols {
			def.Columns = append(def.Columns, columnDef(c, def.Charset))
		}
		d.set(name, def)
	case *ast.DropTableStmt:
		for _, t := range s.Tables {
			name, ok, err := ref(t)
			if err != nil {
				return err
			}
			if ok {
				d.forget(name, "it was dropped and not created again")
			}
		}
	case *ast.RenameTableStmt:
		// Pairs apply in order: RENAME TABLE a TO tmp, b TO a, tmp TO b.
		moved := map[string]schema.TableDef{}
		known := func(db, tbl string) (schema.TableDef, bool) {
			k := db + "." + tbl
			if c, ok := moved[k]; ok {
				return c, c.Columns != nil
			}
			return d.known(k)
		}
		for _, p := range s.TableToTables {
			odb, otbl := tableRef(p.OldTable, defaultDB)
			def, ok := known(odb, otbl)
			moved[odb+"."+otbl] = schema.TableDef{}
			ndb, ntbl := tableRef(p.NewTable, defaultDB)
			if ok {
				moved[ndb+"."+ntbl] = def
			} else {
				moved[ndb+"."+ntbl] = schema.TableDef{}
			}
			if name, exact, _ := d.outboxName(odb, otbl); exact {
				res.touched = append(res.touched, name)
			}
			name, ok2, err := ref(p.NewTable)
			if err != nil {
				return err
			}
			if ok2 && !ok {
				if err := d.uncertain(name, fmt.Sprintf("%s.%s, whose definition the router does not track, was renamed to it", odb, otbl)); err != nil {
					return err
				}
			}
		}
		for k, def := range moved {
			db, tbl, _ := strings.Cut(k, ".")
			if name, exact, _ := d.outboxName(db, tbl); exact {
				if _, was := d.known(name); def.Columns != nil {
					d.set(name, def)
				} else if was || d.why[name] == "" {
					d.forget(name, "it was renamed away and no table was renamed to it")
				}
			}
		}
	case *ast.AlterTableStmt:
		name, ok, err := ref(s.Table)
		if err != nil || !ok {
			return err
		}
		if national.MatchString(s.Text()) {
			return d.uncertain(name, "a NATIONAL character column (utf8mb3) was defined, whose character set the parser does not keep")
		}
		return d.alter(name, s, defaultDB)
	}
	return nil
}

// tablesOf lists the tables of an INSERT's target.
func tablesOf(j *ast.Join) []*ast.TableName {
	var out []*ast.TableName
	var walk func(n ast.ResultSetNode)
	walk = func(n ast.ResultSetNode) {
		switch x := n.(type) {
		case *ast.Join:
			if x.Left != nil {
				walk(x.Left)
			}
			if x.Right != nil {
				walk(x.Right)
			}
		case *ast.TableSource:
			if t, ok := x.Source.(*ast.TableName); ok {
				out = append(out, t)
			}
		}
	}
	if j != nil {
		walk(j)
	}
	return out
}

// alter applies the specifications of one ALTER TABLE to name, in order.
func (d *definitions) alter(name string, s *ast.AlterTableStmt, defaultDB string) error {
	def, known := d.known(name)
	if !known {
		return nil // unknown before, unknown after
	}
	cols := slices.Clone(def.Columns)
	fail := func(format string, args ...any) error {
		return d.uncertain(name, fmt.Sprintf(format, args...))
	}
	// The table's character set options take effect for the whole
	// statement, wherever they stand among the column definitions.
	convert := false
	for _, spec := range s.Specs {
		if spec.Tp != ast.AlterTableOption {
			continue
		}
		cs, conv, err := charsetOption(spec.Options, def.Charset)
		if err != nil {
			return fail("%v", err)
		}
		def.Charset, convert = cs, convert || conv
	}
	for _, spec := range s.Specs {
		switch spec.Tp {
		case ast.AlterTableAddColumns, ast.AlterTableModifyColumn, ast.AlterTableChangeColumn:
			if convert {
				return fail("CONVERT TO CHARACTER SET together with column definitions in one statement")
			}
		}
	}
	for _, spec := range s.Specs {
		switch spec.Tp {
		case ast.AlterTableAddColumns:
			if spec.Position != nil && spec.Position.Tp != ast.ColumnPositionNone && len(spec.NewColumns) != 1 {
				return fail("ADD COLUMN with several columns and a position")
			}
			for _, c := range spec.NewColumns {
				col := columnDef(c, def.Charset)
				if indexOf(cols, col.Name) >= 0 {
					if spec.IfNotExists {
						continue
					}
					return fail("ADD COLUMN %s: the table already has that column", col.Name)
				}
				at, err := position(cols, spec.Position)
				if err != nil {
					return fail("ADD COLUMN %s: %v", col.Name, err)
				}
				cols = slices.Insert(cols, at, col)
			}
		case ast.AlterTableDropColumn:
			i := indexOf(cols, spec.OldColumnName.Name.O)
			if i < 0 {
				if spec.IfExists {
					continue
				}
				return fail("DROP COLUMN %s: the table has no such column", spec.OldColumnName.Name.O)
			}
			cols = slices.Delete(cols, i, i+1)
		case ast.AlterTableModifyColumn, ast.AlterTableChangeColumn:
			if len(spec.NewColumns) != 1 {
				return fail("MODIFY/CHANGE COLUMN without exactly one column")
			}
			// The column is defined anew: without a character set of its
			// own it takes the table's default, not its old one.
			col := columnDef(spec.NewColumns[0], def.Charset)
			old := col.Name
			if spec.Tp == ast.AlterTableChangeColumn {
				old = spec.OldColumnName.Name.O
			}
			i := indexOf(cols, old)
			if i < 0 {
				if spec.IfExists {
					continue
				}
				return fail("MODIFY/CHANGE COLUMN %s: the table has no such column", old)
			}
			if j := indexOf(cols, col.Name); j >= 0 && j != i {
				return fail("CHANGE COLUMN %s to %s: the table already has a column %s", old, col.Name, col.Name)
			}
			cols = slices.Delete(cols, i, i+1)
			at := i
			if spec.Position != nil && spec.Position.Tp != ast.ColumnPositionNone {
				var err error
				if at, err = position(cols, spec.Position); err != nil {
					return fail("MODIFY/CHANGE COLUMN %s: %v", old, err)
				}
			}
			cols = slices.Insert(cols, at, col)
		case ast.AlterTableRenameColumn:
			i := indexOf(cols, spec.OldColumnName.Name.O)
			if i < 0 {
				return fail("RENAME COLUMN %s: the table has no such column", spec.OldColumnName.Name.O)
			}
			if j := indexOf(cols, spec.NewColumnName.Name.O); j >= 0 && j != i {
				return fail("RENAME COLUMN %s: the table already has a column %s", spec.OldColumnName.Name.O, spec.NewColumnName.Name.O)
			}
			cols[i].Name = spec.NewColumnName.Name.O
		case ast.AlterTableRenameTable:
			// ALTER TABLE t RENAME TO u, possibly with other changes: the
			// definition moves; it is applied after the other specs.
			defer func(newTable *ast.TableName) {
				ndb, ntbl := tableRef(newTable, defaultDB)
				moved, _ := d.known(name)
				d.forget(name, "it was renamed away and no table was renamed to it")
				if n, exact, _ := d.outboxName(ndb, ntbl); exact {
					d.set(n, moved)
				}
			}(spec.NewTable)
		case ast.AlterTableOption, ast.AlterTableAddConstraint, ast.AlterTableDropPrimaryKey,
			ast.AlterTableDropIndex, ast.AlterTableDropForeignKey, ast.AlterTableAlterColumn,
			ast.AlterTableLock, ast.AlterTableAlgorithm, ast.AlterTableRenameIndex, ast.AlterTableForce,
			ast.AlterTableEnableKeys, ast.AlterTableDisableKeys, ast.AlterTableIndexInvisible,
			ast.AlterTableAlterCheck, ast.AlterTableDropCheck, ast.AlterTableWithValidation,
			ast.AlterTableWithoutValidation, ast.AlterTableOrderByColumns, ast.AlterTableAddStatistics,
			ast.AlterTableDropStatistics:
			// Indexes, constraints, defaults, options, ALGORITHM and LOCK:
			// the columns and their order stay as they are. (Character
			// set options were read above.)
		case ast.AlterTableAddPartitions, ast.AlterTableCoalescePartitions, ast.AlterTableDropPartition,
			ast.AlterTableTruncatePartition, ast.AlterTablePartition, ast.AlterTableRemovePartitioning,
			ast.AlterTableRebuildPartition, ast.AlterTableReorganizePartition, ast.AlterTableCheckPartitions,
			ast.AlterTableExchangePartition, ast.AlterTableOptimizePartition, ast.AlterTableRepairPartition,
			ast.AlterTablePartitionOptions:
			// Partitions: where the rows are stored, not their columns
			// (EXCHANGE PARTITION needs a table of the same columns).
			// Rows a partition operation removes or brings in have no row
			// events: nothing is routed for them.
		default:
			return fail("ALTER TABLE with a clause the router does not follow (%d)", spec.Tp)
		}
	}
	if convert {
		// CONVERT TO CHARACTER SET converts the text columns too.
		var err error
		if cols, err = convertColumns(cols, def.Charset); err != nil {
			return fail("CONVERT TO CHARACTER SET %s: %v", def.Charset, err)
		}
	}
	if _, was := d.known(name); was || d.why[name] == "" {
		def.Columns = cols
		d.set(name, def)
	}
	return nil
}

// tableCharset is the default character set the table options give (a
// CHARACTER SET, or a COLLATE, which names its set), else current.
func tableCharset(opts []*ast.TableOption, current string) string {
	cs, _, err := charsetOption(opts, current)
	if err != nil {
		return ""
	}
	return cs
}

// charsetOption reads the character set options of a table: the table's
// default character set after them (current when they name none), and
// whether it is CONVERT TO CHARACTER SET. CHARACTER SET DEFAULT (the
// database's default, which is not tracked) is an error.
func charsetOption(opts []*ast.TableOption, current string) (cs string, convert bool, err error) {
	cs = current
	for _, o := range opts {
		switch o.Tp {
		case ast.TableOptionCharset:
			if o.StrValue == "" || o.Default {
				return "", false, fmt.Errorf("CHARACTER SET DEFAULT takes the database's default character set, which the router does not track")
			}
			cs = schema.CanonicalCharset(o.StrValue)
			convert = convert || o.UintValue == ast.TableOptionCharsetWithConvertTo
		case ast.TableOptionCollate:
			cs = schema.CollationCharset(o.StrValue)
		}
	}
	return cs, convert, nil
}

// convertColumns applies CONVERT TO CHARACTER SET cs: every character
// column takes cs (binary strings stay binary), and a TEXT column takes
// the smallest TEXT type that holds as many characters as before, as the
// server retypes it. A VARCHAR keeps its type; should the server have
// made it a TEXT (too long in cs), the TABLE_MAP check finds the
// difference.
func convertColumns(cols []schema.ColumnDef, cs string) ([]schema.ColumnDef, error) {
	newMax, ok := charsetMaxLen(cs)
	if !ok {
		return nil, fmt.Errorf("the width of character set %s is not known", cs)
	}
	out := slices.Clone(cols)
	for i := range out {
		c := &out[i]
		if !schema.IsStringType(c.DataType) || c.Charset == "binary" || c.DataType == "json" {
			continue
		}
		if capacity, ok := textCapacity[c.DataType]; ok {
			oldMax, ok := charsetMaxLen(c.Charset)
			if !ok {
				return nil, fmt.Errorf("column %s: the width of its character set %q is not known", c.Name, c.Charset)
			}
			c.DataType = textTypeFor(capacity / oldMax * newMax)
		}
		c.Charset = cs
	}
	return out, nil
}

// textCapacity is the byte capacity of each TEXT type.
var textCapacity = map[string]int{"tinytext": 1<<8 - 1, "text": 1<<16 - 1, "mediumtext": 1<<24 - 1, "longtext": 1<<32 - 1}

// textTypeFor is the smallest TEXT type of at least n bytes.
func textTypeFor(n int) string {
	switch {
	case n < 1<<8:
		return "tinytext"
	case n < 1<<16:
		return "text"
	case n < 1<<24:
		return "mediumtext"
	}
	return "longtext"
}

// position is the index at which a column goes under pos (nil: at the end).
func position(cols []schema.ColumnDef, pos *ast.ColumnPosition) (int, error) {
	if pos == nil {
		return len(cols), nil
	}
	switch pos.Tp {
	case ast.ColumnPositionNone:
		return len(cols), nil
	case ast.ColumnPositionFirst:
		return 0, nil
	case ast.ColumnPositionAfter:
		i := indexOf(cols, pos.RelativeColumn.Name.O)
		if i < 0 {
			return 0, fmt.Errorf("AFTER %s: the table has no such column", pos.RelativeColumn.Name.O)
		}
		return i + 1, nil
	}
	return 0, fmt.Errorf("unknown column position")
}

// indexOf finds a column by name; MySQL column names ignore case.
func indexOf(cols []schema.ColumnDef, name string) int {
	return slices.IndexFunc(cols, func(c schema.ColumnDef) bool { return strings.EqualFold(c.Name, name) })
}

// columnDef is the definition of a parsed column in a table whose default
// character set is tableCharset ("" when not known), its type spelled as
// information_schema's DATA_TYPE spells it.
func columnDef(c *ast.ColumnDef, tableCharset string) schema.ColumnDef {
	// The parser gives BINARY, VARBINARY and the BLOB types the binary
	// character set; a BINARY attribute (CHAR(3) BINARY, TEXT BINARY) only
	// sets the flag: it picks the _bin collation of the column's set.
	tp := c.Tp.GetType()
	cs := c.Tp.GetCharset()
	declared := cs
	if declared == "" && c.Tp.GetCollate() != "" {
		declared = schema.CollationCharset(c.Tp.GetCollate())
	}
	for _, o := range c.Options {
		if o.Tp == ast.ColumnOptionCollate && o.StrValue != "" {
			declared = schema.CollationCharset(o.StrValue)
		}
	}
	name := types.TypeToStr(tp, cs)
	switch tp {
	case mysql.TypeLong:
		name = "int"
	case mysql.TypeInt24:
		name = "mediumint"
	case mysql.TypeNewDecimal:
		name = "decimal"
	case mysql.TypeString:
		if cs == "binary" {
			name = "binary"
		} else {
			name = "char"
		}
	}
	def := schema.ColumnDef{Name: c.Name.Name.O, DataType: strings.ToLower(name)}
	def.Charset = schema.ColumnCharset(def.DataType, declared, tableCharset)
	if schema.IsNumericType(def.DataType) {
		def.Sign = schema.Signed
		if mysql.HasUnsignedFlag(c.Tp.GetFlag()) {
			def.Sign = schema.Unsigned
		}
	}
	return def
}
