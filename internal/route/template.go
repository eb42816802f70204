package route

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/binlog-router/binlog-router/internal/binlog"
)

// DefaultTopicTemplate is the topic template used when Config.TopicTemplate
// is empty.
const DefaultTopicTemplate = "outbox.event.{event_type}"

// maxTopicLen is the longest topic name Kafka accepts.
const maxTopicLen = 249

// field is a row value a placeholder stands for.
type field uint8

const (
	literal field = iota
	fieldEventType
	fieldAggregateType
	fieldDatabase
	fieldTable
	numFields
)

var fieldNames = [numFields]string{
	fieldEventType:     "event_type",
	fieldAggregateType: "aggregate_type",
	fieldDatabase:      "database",
	fieldTable:         "table",
}

// value returns the row value of f as bytes or as a string (one is empty).
func (f field) value(row *binlog.OutboxRow) ([]byte, string) {
	switch f {
	case fieldEventType:
		return row.EventType, ""
	case fieldAggregateType:
		return row.AggregateType, ""
	case fieldDatabase:
		return nil, row.Database
	case fieldTable:
		return nil, row.Table
	}
	return nil, ""
}

type segment struct {
	field field  // literal for literal text
	text  string // the literal text
}

// template is a parsed topic template.
type template struct {
	text     string
	segs     []segment
	fields   []field // distinct fields used, in order of first use
	constant string  // the topic when there are no placeholders
}

// parseTemplate parses a topic template. Literal text must already be legal
// in a topic name, so that only row values can make a topic illegal.
func parseTemplate(text string) (*template, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w %s: %s", ErrInvalidTemplate, quote(text), fmt.Sprintf(format, args...))
	}
	if text == "" {
		return nil, fail("template is empty")
	}
	t := &template{text: text}
	var used [numFields]bool
	fixed := 0
	for i := 0; i < len(text); {
		switch c := text[i]; {
		case c == '{':
			end := strings.IndexAny(text[i+1:], "{}")
			if end < 0 || text[i+1+end] == '{' {
				return nil, fail(`"{" at offset %d has no closing "}"`, i)
			}
			name := text[i+1 : i+1+end]
			f := lookupField(name)
			if f == literal {
				return nil, fail("unknown placeholder %s at offset %d; known are {event_type}, {aggregate_type}, {database}, {table}",
					quote("{"+name+"}"), i)
			}
			if !used[f] {
				used[f] = true
				t.fields = append(t.fields, f)
			}
			t.segs = append(t.segs, segment{field: f})
			i += end + 2
		case c == '}':
			return nil, fail(`"}" at offset %d has no opening "{"`, i)
		default:
			end := strings.IndexAny(text[i:], "{}")
			if end < 0 {
				end = len(text) - i
			}
			lit := text[i : i+end]
			if j := badTopicChar(lit); j >= 0 {
				return nil, fail("character %s at offset %d is not allowed in a Kafka topic name (allowed: A-Z a-z 0-9 . _ -)",
					charAt(lit[j:]), i+j)
			}
			fixed += len(lit)
			t.segs = append(t.segs, segment{text: lit})
			i += end
		}
	}
	if fixed > maxTopicLen {
		return nil, fail("literal text is %d characters, longer than the %d Kafka allows", fixed, maxTopicLen)
	}
	if len(t.fields) == 0 {
		if err := ValidTopic(text); err != nil {
			return nil, fail("%v", err)
		}
		t.constant = text
	}
	return t, nil
}

func lookupField(name string) field {
	for f := fieldEventType; f < numFields; f++ {
		if fieldNames[f] == name {
			return f
		}
	}
	return literal
}

// cacheKey appends to dst a key that identifies the values of every field
// the template uses. Each value is length-prefixed, so any bytes are safe.
func (t *template) cacheKey(dst []byte, row *binlog.OutboxRow) []byte {
	for _, f := range t.fields {
		b, s := f.value(row)
		if b != nil {
			dst = binary.AppendUvarint(dst, uint64(len(b)))
			dst = append(dst, b...)
		} else {
			dst = binary.AppendUvarint(dst, uint64(len(s)))
			dst = append(dst, s...)
		}
	}
	return dst
}

// expand appends the topic for row to dst. It reports a problem if a used
// field is NULL or empty or if the result is not a legal topic name.
func (t *template) expand(dst []byte, row *binlog.OutboxRow) ([]byte, *problem) {
	for _, f := range t.fields {
		if b, s := f.value(row); len(b) == 0 && s == "" {
			state := "empty"
			if f == fieldAggregateType && b == nil {
				state = "NULL"
			}
			return dst, newProblem(KindInvalidTopic, ErrInvalidTopic, "topic template "+quote(t.text)+" uses {"+
				fieldNames[f]+"} but "+fieldNames[f]+" is "+state+"; set it in the row or change the topic template")
		}
	}
	for _, s := range t.segs {
		if s.field == literal {
			dst = append(dst, s.text...)
			continue
		}
		b, str := s.field.value(row)
		dst = append(dst, b...)
		dst = append(dst, str...)
	}
	if err := checkTopic(dst); err != nil {
		return dst, newProblem(KindInvalidTopic, ErrInvalidTopic, "topic "+quote(string(dst))+" built from template "+
			quote(t.text)+" is not a legal Kafka topic name: "+err.Error()+"; fix the row values or the topic template")
	}
	return dst, nil
}

// ValidTopic reports whether Kafka accepts name as a topic name: 1 to 249
// characters from [A-Za-z0-9._-], and neither "." nor "..". The error wraps
// ErrInvalidTopic.
func ValidTopic(name string) error {
	if err := checkTopic(name); err != nil {
		return fmt.Errorf("%w %s: %s", ErrInvalidTopic, quote(name), err.Error())
	}
	return nil
}

// topicError is a reason a topic name is illegal; it is built only on the
// error path.
type topicError string

func (e topicError) Error() string { return string(e) }

func checkTopic[T string | []byte](name T) error {
	switch {
	case len(name) == 0:
		return topicError("the name is empty")
	case len(name) > maxTopicLen:
		return topicError("the name is " + strconv.Itoa(len(name)) + " characters, longer than the 249 Kafka allows")
	case name[0] == '.' && (len(name) == 1 || len(name) == 2 && name[1] == '.'):
		return topicError(`"." and ".." are reserved`)
	}
	if j := badTopicChar(name); j >= 0 {
		return topicError("character " + charAt(string(name[j:min(j+utf8.UTFMax, len(name))])) + " at offset " + strconv.Itoa(j) +
			" is not allowed (allowed: A-Z a-z 0-9 . _ -)")
	}
	return nil
}

// badTopicChar returns the offset of the first byte not allowed in a topic
// name, or -1.
func badTopicChar[T string | []byte](s T) int {
	for i := 0; i < len(s); i++ {
		if !topicChar[s[i]] {
			return i
		}
	}
	return -1
}

var topicChar = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	t['.'], t['_'], t['-'] = true, true, true
	return t
}()

// charAt quotes the character at the start of s for an error message.
func charAt(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && n <= 1 {
		return fmt.Sprintf("byte 0x%02x", s[0])
	}
	return strconv.QuoteRune(r)
}
