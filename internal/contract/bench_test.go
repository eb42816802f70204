package contract

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// benchPayload is route's benchmark payload: an order object padded to n
// bytes by a string member.
func benchPayload(n int) []byte {
	head := `{"orderId":"order-42","customer":{"id":7,"name":"Ada Lovelace","email":"ada@example.com"},` +
		`"items":[{"sku":"A-1","qty":2,"price":19.99},{"sku":"B-7","qty":1,"price":5.5}],"total":45.48,"note":"`
	return []byte(head + strings.Repeat("x", n-len(head)-2) + `"}`)
}

// BenchmarkCheckParts splits the cost of Contract.Check on route's
// benchmark contract and payloads: decoding (decode, against the
// library's UnmarshalJSON it replaces) and the library's validation of
// the decoded document.
func BenchmarkCheckParts(b *testing.B) {
	schema, err := os.ReadFile(filepath.Join("..", "route", "testdata", "contracts", "OrderCreated.json"))
	if err != nil {
		b.Fatal(err)
	}
	s, err := Load(writeDir(b, map[string]string{"OrderCreated.json": string(schema)}), MissingFail)
	if err != nil {
		b.Fatal(err)
	}
	k := s.Lookup([]byte("OrderCreated"), nil)
	for _, size := range []int{500, 64 << 10} {
		p := benchPayload(size)
		run := func(name string, f func() error) {
			b.Run("payload"+strconv.Itoa(size)+"/"+name, func(b *testing.B) {
				b.SetBytes(int64(len(p)))
				b.ReportAllocs()
				for b.Loop() {
					if err := f(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		run("UnmarshalJSON", func() error { _, err := jsonschema.UnmarshalJSON(bytes.NewReader(p)); return err })
		run("decode", func() error { decode(p); return nil })
		d, _ := decode(p)
		run("Validate", func() error { return k.schema.Validate(d.doc) })
		run("CheckStrict", func() error { return k.CheckStrict(p) })
	}
}
