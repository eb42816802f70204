package route

import (
	"fmt"
	"net/url"
	"strings"
)

// DefaultCloudEventsSource is the CloudEvents source attribute of a zero
// Config.CloudEventsSource: the outbox table's database and name under
// /mysql, "/mysql/shop/outbox" for shop.outbox. It is the same for MySQL
// and MariaDB: the source names the table whose rows the events are, not
// the server, so that a failover to another server keeps it.
const DefaultCloudEventsSource = "/mysql/{database}/{table}"

// sourceTemplate is a parsed Config.CloudEventsSource: literal text with
// the placeholders {database} and {table}.
type sourceTemplate struct {
	text string
}

// parseSource checks s: the placeholders {database} and {table} only, and
// literal text that is legal in a URI reference (RFC 3986), since the
// source attribute is one.
func parseSource(s string) (*sourceTemplate, error) {
	if s == "" {
		s = DefaultCloudEventsSource
	}
	rest := strings.NewReplacer("{database}", "", "{table}", "").Replace(s)
	if i := strings.IndexAny(rest, "{}"); i >= 0 {
		return nil, fmt.Errorf("%w: --cloudevents-source %s: only the placeholders {database} and {table} may be used; write other text literally", ErrInvalidEnvelope, quote(s))
	}
	for _, c := range []byte(rest) {
		if !uriChar(c) {
			return nil, fmt.Errorf("%w: --cloudevents-source %s: %q cannot appear in a URI reference; percent-encode it (RFC 3986)", ErrInvalidEnvelope, quote(s), c)
		}
	}
	if _, err := url.Parse(s); err != nil {
		return nil, fmt.Errorf("%w: --cloudevents-source %s is not a URI reference: %v", ErrInvalidEnvelope, quote(s), err)
	}
	return &sourceTemplate{text: s}, nil
}

// expand returns the source of table db.table: the placeholders replaced
// by the names, each percent-encoded as a path segment (url.PathEscape).
func (t *sourceTemplate) expand(db, table string) string {
	return strings.NewReplacer("{database}", url.PathEscape(db), "{table}", url.PathEscape(table)).Replace(t.text)
}

// uriChar reports whether c may appear literally in a URI reference:
// unreserved, reserved, or the '%' of a percent-encoding.
func uriChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~:/?#[]@!$&'()*+,;=%", c) >= 0
}

// tableKey names one outbox table in a Router's caches.
type tableKey struct{ db, table string }

// source returns the source attribute of row's table, from the cache when
// it can.
func (r *Router) source(db, table string) []byte {
	k := tableKey{db, table}
	if s, ok := r.sources[k]; ok {
		return s
	}
	if len(r.sources) >= maxCacheEntries {
		clear(r.sources)
	}
	s := []byte(r.src.expand(db, table))
	r.sources[k] = s
	return s
}
