package schema

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseTableName(t *testing.T) {
	tests := []struct {
		in   string
		want TableName
		str  string // want String(); empty means the same as in
	}{
		{in: "app.outbox", want: TableName{"app", "outbox"}},
		{in: "  app.outbox\n", want: TableName{"app", "outbox"}, str: "app.outbox"},
		{in: "`app`.`outbox`", want: TableName{"app", "outbox"}, str: "app.outbox"},
		{in: "app.`outbox`", want: TableName{"app", "outbox"}, str: "app.outbox"},
		{in: "`my.app`.outbox", want: TableName{"my.app", "outbox"}},
		{in: "`my app`.`out``box`", want: TableName{"my app", "out`box"}},
		{in: "App_1.$Outbox", want: TableName{"App_1", "$Outbox"}},
		{in: "données.boîte", want: TableName{"données", "boîte"}},
		{in: "1.2", want: TableName{"1", "2"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTableName(tt.in)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			str := tt.str
			if str == "" {
				str = tt.in
			}
			require.Equal(t, str, got.String())
		})
	}
}

func TestParseTableNameErrors(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string
	}{
		{"", "empty name"},
		{"   ", "empty name"},
		{"outbox", "want database.table"},
		{"`outbox`", "want database.table"},
		{"a.b.c", "want database.table"},
		{".outbox", "empty name"},
		{"app.", "empty name"},
		{"app..outbox", "empty name"},
		{"``.outbox", "empty name"},
		{"app.`outbox", "unterminated backtick"},
		{"`app.outbox", "unterminated backtick"},
		{"app.out`box", "quote it with backticks"},
		{"app.out box", "quote it with backticks"},
		{"app .outbox", "quote it with backticks"},
		{"`app`x.outbox", "want a dot between"},
		{"`app` .outbox", "want a dot between"},
		{"app.`outbox `", "ends with a space"},
		{"app.`a\x00b`", "NUL"},
		{"app.\xff", "not valid UTF-8"},
		{"app.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "longer than 64"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := ParseTableName(tt.in)
			require.ErrorContains(t, err, tt.wantErr)
			require.ErrorContains(t, err, "parsing table name ")
		})
	}
}

func TestTableNameQuotedString(t *testing.T) {
	require.Equal(t, "`app`.`outbox`", TableName{"app", "outbox"}.QuotedString())
	require.Equal(t, "`my.app`.`out``box`", TableName{"my.app", "out`box"}.QuotedString())
}

// FuzzParseTableName checks that parsing never panics and that every
// accepted name survives String and QuotedString round trips.
func FuzzParseTableName(f *testing.F) {
	for _, s := range []string{"app.outbox", "`my.app`.`out``box`", "`a`.b", "a.`", "``.``", " a . b ", "é.\u00a0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tn, err := ParseTableName(s)
		if err != nil {
			return
		}
		for _, form := range []string{tn.String(), tn.QuotedString()} {
			again, err := ParseTableName(form)
			if err != nil {
				t.Fatalf("ParseTableName(%q) = %+v, but its form %q does not parse: %v", s, tn, form, err)
			}
			if again != tn {
				t.Fatalf("ParseTableName(%q) = %+v, but its form %q parses as %+v", s, tn, form, again)
			}
		}
	})
}
