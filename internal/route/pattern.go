package route

import (
	"regexp"
	"strings"
)

// TopicPattern returns a regular expression matching every topic name the
// topic template can produce (each placeholder stands for one or more
// topic name characters), for looking up the topics a router writes to.
func TopicPattern(templateText string) (*regexp.Regexp, error) {
	t, err := parseTemplate(templateText)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("^")
	for _, s := range t.segs {
		if s.field == literal {
			b.WriteString(regexp.QuoteMeta(s.text))
		} else {
			b.WriteString(`[A-Za-z0-9._-]+`)
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}
