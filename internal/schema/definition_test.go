package schema

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestColumnCharset(t *testing.T) {
	for _, tt := range []struct{ dataType, declared, table, want string }{
		{"varchar", "latin1", "utf8mb4", "latin1"},
		{"varchar", "", "utf8mb4", "utf8mb4"},
		{"varchar", "UTF8", "", "utf8mb3"},
		{"text", "", "", ""}, // the table's default not known
		{"binary", "", "latin1", "binary"},
		{"blob", "latin1", "latin1", "binary"},
		{"json", "binary", "latin1", "utf8mb4"},
		{"int", "latin1", "latin1", ""},
		{"uuid", "", "utf8mb4", ""},
	} {
		assert.Equal(t, tt.want, ColumnCharset(tt.dataType, tt.declared, tt.table), "%+v", tt)
	}
	for coll, cs := range map[string]string{"latin1_swedish_ci": "latin1", "utf8mb4_uca1400_ai_ci": "utf8mb4",
		"utf8_general_ci": "utf8mb3", "utf8mb3_bin": "utf8mb3", "binary": "binary", "UCS2_GENERAL_CI": "ucs2"} {
		assert.Equal(t, cs, CollationCharset(coll), coll)
	}
}

// A definition stored by an earlier version (an array of columns with
// names and types) reads with character sets and signs not known.
func TestTableDefJSON(t *testing.T) {
	var d TableDef
	require.NoError(t, json.Unmarshal([]byte(` [{"name":"id","type":"bigint"},{"name":"p","type":"text"}]`), &d))
	assert.Equal(t, TableDef{Columns: []ColumnDef{{Name: "id", DataType: "bigint"}, {Name: "p", DataType: "text"}}}, d)

	d = TableDef{Charset: "latin1", Columns: []ColumnDef{{Name: "id", DataType: "int", Sign: Unsigned}, {Name: "p", DataType: "text", Charset: "cp1250"}}}
	b, err := json.Marshal(d)
	require.NoError(t, err)
	assert.Equal(t, `{"columns":[{"name":"id","type":"int","sign":"unsigned"},{"name":"p","type":"text","charset":"cp1250"}],"charset":"latin1"}`, string(b))
	var back TableDef
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, d, back)
	assert.Error(t, json.Unmarshal([]byte(`"x"`), &back))
}
