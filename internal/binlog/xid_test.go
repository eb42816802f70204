package binlog

import "testing"

// FuzzParseXIDText: any input parses or fails without a panic, and the
// key of a parsed XID parses back to the same key (the form the table of
// prepared transactions compares).
func FuzzParseXIDText(f *testing.F) {
	for _, s := range []string{"X'7831',X'',1", "'order-42'", "'a''b','c',3", "0x41ff", "X'zz'", "'open", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		x, err := parseXIDText(in)
		if err != nil {
			return
		}
		y, err := parseXIDText([]byte(x.key()))
		if err != nil {
			t.Fatalf("key %q of %q does not parse: %v", x.key(), in, err)
		}
		if y.key() != x.key() {
			t.Fatalf("key %q of %q parses to %q", x.key(), in, y.key())
		}
		_ = x.String()
	})
}

// FuzzParseXAPrepare: any XA_PREPARE event body decodes or fails without
// a panic.
func FuzzParseXAPrepare(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 'x', '1'})
	f.Add([]byte{1, 1, 0, 0, 0, 255, 255, 255, 255, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		x, _, err := parseXAPrepare(in)
		if err == nil {
			_ = x.key()
		}
	})
}
