package gtid

import (
	"fmt"
	"strings"
)

// Flavor names the server family whose GTID semantics a Set follows.
type Flavor string

// The supported flavours.
const (
	MySQL   Flavor = "mysql"   // uuid[:tag]:gno transactions, sets of intervals
	MariaDB Flavor = "mariadb" // domain-server-seq, one position per domain
)

// ParseFlavor returns the Flavor named by s ("mysql" or "mariadb", any case).
// The error wraps ErrFlavor.
func ParseFlavor(s string) (Flavor, error) {
	switch f := Flavor(strings.ToLower(strings.TrimSpace(s))); f {
	case MySQL, MariaDB:
		return f, nil
	}
	return "", fmt.Errorf("parsing GTID flavor %q: %w (want %q or %q)", s, ErrFlavor, MySQL, MariaDB)
}

// valid reports whether f is one of the supported flavours.
func (f Flavor) valid() bool { return f == MySQL || f == MariaDB }
