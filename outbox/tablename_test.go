package outbox

import (
	"testing"

	"github.com/binlog-router/binlog-router/internal/schema"
)

// FuzzQuoteTable: quoteTable never panics, quotes its own output to
// itself, and agrees with the router's parser (schema.ParseTableName) on
// every database.table name that one accepts, so the Writer writes to the
// table the router reads.
func FuzzQuoteTable(f *testing.F) {
	for _, s := range []string{"outbox", "app.outbox", "`my.app`.`out``box`", " app.outbox ", "a.b.c", "`x", "my outbox", "app.`` ", "é.ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := quoteTable(s)
		if err != nil {
			if tn, perr := schema.ParseTableName(s); perr == nil {
				t.Fatalf("quoteTable(%q) failed (%v) but the router parses it as %v", s, err, tn)
			}
			return
		}
		again, err := quoteTable(q)
		if err != nil || again != q {
			t.Fatalf("quoteTable(%q) = %q; quoting that again gives %q, %v", s, q, again, err)
		}
		if tn, perr := schema.ParseTableName(s); perr == nil && tn.QuotedString() != q {
			t.Fatalf("quoteTable(%q) = %q; the router reads %q", s, q, tn.QuotedString())
		}
	})
}
