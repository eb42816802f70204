package route

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/binlog-router/binlog-router/internal/binlog"
)

// benchPayload returns a JSON object of exactly n bytes.
func benchPayload(n int) []byte {
	head := `{"orderId":"order-42","customer":{"id":7,"name":"Ada Lovelace","email":"ada@example.com"},` +
		`"items":[{"sku":"A-1","qty":2,"price":19.99},{"sku":"B-7","qty":1,"price":5.5}],"total":45.48,"note":"`
	p := head + strings.Repeat("x", n-len(head)-2) + `"}`
	if len(p) != n || !json.Valid([]byte(p)) {
		panic("bad bench payload")
	}
	return []byte(p)
}

func benchRow() *binlog.OutboxRow {
	row := testRow()
	row.AggregateType = []byte("Order")
	row.SchemaVersion = []byte("3")
	row.Traceparent = []byte("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	row.Payload = benchPayload(500)
	return row
}

func BenchmarkRecord(b *testing.B) {
	headers := []byte(`{"tenant":"acme","source":"checkout-service","retries":3,"tags":["a","b"]}`)
	ceHeaders := []byte(`{"tenant":"acme","origin":"checkout-service","retries":3,"tags":["a","b"]}`)
	cases := []struct {
		name        string
		validate    bool
		headers     []byte
		envelope    Envelope
		fourHeaders bool // no schema_version or traceparent, as the benchmark workload's rows
		readerJSON  bool // the binlog reader found the payload JSON (binlog.OutboxRow.PayloadJSON)
	}{
		{"payload500/validate=false", false, nil, "", false, false},
		{"payload500/validate=true", true, nil, "", false, false},
		{"payload500/validate=true/headers", true, headers, "", false, false},
		{"payload500/validate=true/cloudevents", true, ceHeaders, EnvelopeCloudEvents, false, false},
		{"payload500/validate=true/cloudevents-structured", true, ceHeaders, EnvelopeCloudEventsStructured, false, false},
		{"payload500/validate=true/4-headers", true, nil, "", true, false},
		{"payload500/validate=true/4-headers/reader-checked", true, nil, "", true, true},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			r := newRouter(b, func(cfg *Config) { cfg.ValidateJSON, cfg.Envelope = c.validate, c.envelope })
			row := benchRow()
			row.Headers = c.headers
			if c.fourHeaders {
				row.SchemaVersion, row.Traceparent = nil, nil
			}
			row.PayloadJSON = c.readerJSON
			txn := testTxn()
			b.SetBytes(int64(len(row.Payload)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Route(row, txn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// One transaction per record: the binlog_gtid value is new each time.
	b.Run("payload500/validate=true/txn-per-record", func(b *testing.B) {
		r := newRouter(b, nil)
		row := benchRow()
		txns := make([]*binlog.Txn, 1024)
		for i := range txns {
			txns[i] = &binlog.Txn{GTID: "0-1-" + strconv.Itoa(i), Time: testCommit}
		}
		b.SetBytes(int64(len(row.Payload)))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := r.Route(row, txns[i&1023]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkRecordContracts is the cost of Config.Contracts: the same
// record with JSON validation, without and with the OrderCreated contract
// of testdata/contracts, on 500 B and 64 KiB payloads.
func BenchmarkRecordContracts(b *testing.B) {
	set := testContracts(b, "")
	for _, size := range []int{500, 64 << 10} {
		for _, on := range []bool{false, true} {
			b.Run("payload"+strconv.Itoa(size)+"/contracts="+strconv.FormatBool(on), func(b *testing.B) {
				r := newRouter(b, func(cfg *Config) {
					if on {
						cfg.Contracts = set
					}
				})
				row := benchRow()
				row.Payload = benchPayload(size)
				txn := testTxn()
				b.SetBytes(int64(len(row.Payload)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := r.Route(row, txn); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkValidateJSON isolates the cost of Config.ValidateJSON.
func BenchmarkValidateJSON(b *testing.B) {
	p := benchPayload(500)
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		if !json.Valid(p) {
			b.Fatal("invalid")
		}
	}
}

func BenchmarkMurmur2(b *testing.B) {
	key := []byte("order-0123456789") // 16 bytes
	b.SetBytes(int64(len(key)))
	b.ReportAllocs()
	var sink uint32
	for b.Loop() {
		sink += Murmur2(key)
	}
	_ = sink
}
