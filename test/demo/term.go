package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// term is the demo's terminal. The demo and the router's log write to it
// from different goroutines; the mutex keeps each line whole.
type term struct {
	mu    sync.Mutex
	w     io.Writer
	color bool
}

// out is where everything meant for the user goes.
var out = newTerm(os.Stdout)

// newTerm colours its output only on a terminal, and never when NO_COLOR
// is set (https://no-color.org).
func newTerm(f *os.File) *term {
	color := false
	if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		color = os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	}
	return &term{w: f, color: color}
}

// ANSI styles.
const (
	bold   = "1"
	dim    = "2"
	red    = "31"
	green  = "32"
	yellow = "33"
	cyan   = "36"
)

// paint wraps s in an ANSI style when colour is on.
func (t *term) paint(style, s string) string {
	if !t.color {
		return s
	}
	return "\x1b[" + style + "m" + s + "\x1b[0m"
}

// printf writes one or more whole lines.
func (t *term) printf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.w, format+"\n", args...)
}

// section starts a numbered part of the demo.
func (t *term) section(title string) {
	t.printf("\n%s", t.paint(bold+";"+cyan, "▸ "+title))
}

// ok and note print an indented line with a marker.
func (t *term) ok(format string, args ...any) {
	t.printf("  %s %s", t.paint(green, "✓"), fmt.Sprintf(format, args...))
}

func (t *term) note(format string, args ...any) {
	t.printf("  %s", t.paint(dim, fmt.Sprintf(format, args...)))
}

// ansi matches the colour codes zerolog's console writer emits.
var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// prefixWriter passes another process's output to the terminal line by
// line, each line prefixed. exec.Cmd calls Write from one goroutine when
// Stdout and Stderr are the same writer, so buf needs no lock.
type prefixWriter struct {
	t      *term
	prefix string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		p.line(string(p.buf[:i]))
		p.buf = p.buf[i+1:]
	}
}

// flush prints an unfinished last line; call it after the process exited.
func (p *prefixWriter) flush() {
	if len(p.buf) > 0 {
		p.line(string(p.buf))
		p.buf = nil
	}
}

// maxLineRunes cuts long log lines (the router logs whole DDL statements)
// to keep the demo readable.
const maxLineRunes = 160

// line prints one log line without its own colours: dimmed, so that the
// demo's output stands out, except warnings and errors.
func (p *prefixWriter) line(s string) {
	s = truncate(ansi.ReplaceAllString(strings.TrimRight(s, "\r"), ""), maxLineRunes)
	style := dim
	switch {
	case strings.Contains(s, " WRN "):
		style = yellow
	case strings.Contains(s, " ERR "), strings.Contains(s, " FTL "):
		style = red
	}
	p.t.printf("  %s", p.t.paint(style, p.prefix+s))
}

// truncate cuts s to at most n runes.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
