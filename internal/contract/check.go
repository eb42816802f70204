package contract

import (
	"bytes"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// printer words the library's messages in English.
var printer = message.NewPrinter(language.English)

// Lookup returns the contract of a row with this event type and
// schema_version (nil when NULL or not mapped): the versioned contract if
// schemaVersion is decimal digits and has one, else the unversioned one,
// else nil.
func (s *Set) Lookup(eventType, schemaVersion []byte) *Contract {
	if s == nil {
		return nil
	}
	bt := s.byType[string(eventType)]
	if bt == nil {
		return nil
	}
	if len(schemaVersion) > 0 && len(bt.versions) > 0 {
		if v, ok := canonicalVersionBytes(schemaVersion); ok {
			if k := bt.versions[string(v)]; k != nil {
				return k
			}
		}
	}
	return bt.any
}

// Check checks payload against the contract of its event type and
// schema_version (Lookup). It returns nil when the payload satisfies it,
// when payload is nil (a NULL payload is a tombstone, it carries no
// event), when s is nil, and when there is no contract under
// MissingAllow; a *Violation when the payload is not JSON or violates
// the contract; a *MissingError when there is no contract under
// MissingFail. Safe for concurrent use.
func (s *Set) Check(eventType, schemaVersion, payload []byte) error {
	if s == nil || payload == nil {
		return nil
	}
	k := s.Lookup(eventType, schemaVersion)
	if k == nil {
		if s.missing == MissingFail {
			return &MissingError{Dir: s.dir, EventType: string(eventType), SchemaVersion: string(schemaVersion)}
		}
		return nil
	}
	return k.Check(payload)
}

// Check checks payload against this contract: nil, or a *Violation.
// A payload that is not JSON is a Violation of keyword "json"; strings
// holding bytes that are not UTF-8 are checked as encoding/json decodes
// them, with U+FFFD in their place. Safe for concurrent use.
func (k *Contract) Check(payload []byte) error {
	d, ok := decode(payload)
	if !ok {
		return k.notJSON(payload)
	}
	return k.validate(d.doc)
}

// CheckStrict is Check for a caller that also requires the payload to be
// JSON in UTF-8 (the router's --validate-json): it returns ErrNotJSON,
// before any check, when the payload is not JSON or not UTF-8, that is
// exactly when encoding/json.Valid(payload) && utf8.Valid(payload) is
// false. Reading the payload once answers both, so the caller need not
// scan it again. Safe for concurrent use.
func (k *Contract) CheckStrict(payload []byte) error {
	d, ok := decode(payload)
	if !ok || d.badUTF8 {
		return ErrNotJSON
	}
	return k.validate(d.doc)
}

// notJSON is the Violation of a payload that is not JSON, worded as the
// library's decoder words it.
func (k *Contract) notJSON(payload []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(payload))
	if err == nil { // not reached: decode rejects what UnmarshalJSON rejects and no more
		return k.validate(doc)
	}
	return &Violation{File: k.File, Keyword: "json", Message: "payload is not JSON: " + err.Error()}
}

// validate checks a decoded payload: nil, or a *Violation.
func (k *Contract) validate(doc any) error {
	err := k.schema.Validate(doc)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return &Violation{File: k.File, Keyword: "?", Message: err.Error()}
	}
	leaves := 0
	first := firstLeaf(ve, &leaves)
	return &Violation{
		File:         k.File,
		InstancePath: pointer(first.InstanceLocation),
		Keyword:      strings.Join(first.ErrorKind.KeywordPath(), "/"),
		Message:      first.ErrorKind.LocalizedString(printer),
		More:         leaves - 1,
	}
}

// firstLeaf returns, of the failures without causes, the one whose
// instance path and then keyword path sort first, and counts them in n.
// The library may find them in any order (it walks maps); the choice must
// not depend on it, so that a row always gives the same error.
func firstLeaf(e *jsonschema.ValidationError, n *int) *jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		*n++
		return e
	}
	var first *jsonschema.ValidationError
	for _, c := range e.Causes {
		if l := firstLeaf(c, n); first == nil || leafLess(l, first) {
			first = l
		}
	}
	return first
}

func leafLess(a, b *jsonschema.ValidationError) bool {
	if c := slices.Compare(a.InstanceLocation, b.InstanceLocation); c != 0 {
		return c < 0
	}
	if c := slices.Compare(a.ErrorKind.KeywordPath(), b.ErrorKind.KeywordPath()); c != 0 {
		return c < 0
	}
	return a.SchemaURL < b.SchemaURL
}

// pointer writes a JSON Pointer (RFC 6901) of the tokens.
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return b.String()
}
