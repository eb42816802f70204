package contract

import (
	"errors"
	"testing"
)

// FuzzCheck: any payload gives nil or a *Violation naming the contract's
// file, never a panic, and the same verdict twice.
func FuzzCheck(f *testing.F) {
	dir := writeDir(f, map[string]string{"e.json": orderSchema, "defs/money.json": moneySchema})
	s, err := Load(dir, MissingFail)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{`{"orderId":"o","amount":1}`, `{"orderId":1}`, `[]`, `{"items":[{}]}`, `"\ud800"`, `1e400`, `{"amount":-0.0}`, `{`, ""} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		err := s.Check([]byte("e"), nil, payload)
		again := s.Check([]byte("e"), nil, payload)
		if (err == nil) != (again == nil) || (err != nil && err.Error() != again.Error()) {
			t.Fatalf("two verdicts: %v, %v", err, again)
		}
		var v *Violation
		if err != nil && (!errors.As(err, &v) || v.File == "" || v.Keyword == "") {
			t.Fatalf("not a violation naming file and keyword: %#v", err)
		}
	})
}
