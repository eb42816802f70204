package binlog

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"unicode"
)

// xid is an XA transaction identifier: format id, global transaction id
// and branch qualifier.
type xid struct {
	format       uint32
	gtrid, bqual []byte
}

// key is the XID as both servers write it in XA COMMIT and XA ROLLBACK
// statements, X'<gtrid hex>',X'<bqual hex>',<format>: the form the table of
// prepared transactions is keyed by.
func (x xid) key() string {
	return fmt.Sprintf("X'%x',X'%x',%d", x.gtrid, x.bqual, x.format)
}

// String is the XID as an application would have written it: 'order-42',
// or 'g','b',7 when it has a branch qualifier or another format id.
func (x xid) String() string {
	s := quoteXIDPart(x.gtrid)
	if len(x.bqual) > 0 || x.format != 1 {
		s += "," + quoteXIDPart(x.bqual) + "," + strconv.FormatUint(uint64(x.format), 10)
	}
	return s
}

func quoteXIDPart(b []byte) string {
	for _, r := range string(b) {
		if !unicode.IsPrint(r) || r == '\'' || r == '\\' || r == unicode.ReplacementChar {
			return fmt.Sprintf("X'%x'", b)
		}
	}
	return "'" + string(b) + "'"
}

// parseXAPrepare decodes the body of an XA_PREPARE_LOG_EVENT (both
// flavours): one_phase (1 byte), format id, gtrid and bqual lengths (4
// bytes each, little endian), then gtrid and bqual.
func parseXAPrepare(data []byte) (x xid, onePhase bool, err error) {
	if len(data) < 13 {
		return x, false, fmt.Errorf("XA_PREPARE event of %d bytes is too short", len(data))
	}
	onePhase = data[0] != 0
	x.format = binary.LittleEndian.Uint32(data[1:])
	g, b := binary.LittleEndian.Uint32(data[5:]), binary.LittleEndian.Uint32(data[9:])
	if g > 64 || b > 64 || int(g+b) > len(data)-13 {
		return x, false, fmt.Errorf("XA_PREPARE event: gtrid length %d and bqual length %d do not fit its %d bytes", g, b, len(data))
	}
	x.gtrid = bytes.Clone(data[13 : 13+g])
	x.bqual = bytes.Clone(data[13+g : 13+g+b])
	return x, onePhase, nil
}

// parseXIDText parses the XID of an XA statement: gtrid[,bqual[,format]]
// where gtrid and bqual are 'quoted' or X'hex' strings (the servers log
// the X'hex' form) and format an unsigned integer (default 1).
func parseXIDText(s []byte) (xid, error) {
	x := xid{format: 1}
	p := &xidParser{s: s}
	var err error
	if x.gtrid, err = p.str(); err != nil {
		return x, err
	}
	if p.comma() {
		if x.bqual, err = p.str(); err != nil {
			return x, err
		}
		if p.comma() {
			if x.format, err = p.uint(); err != nil {
				return x, err
			}
		}
	}
	p.space()
	if p.i != len(p.s) {
		return x, fmt.Errorf("unexpected %q after the XID", p.s[p.i:])
	}
	return x, nil
}

type xidParser struct {
	s []byte
	i int
}

func (p *xidParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *xidParser) comma() bool {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ',' {
		p.i++
		return true
	}
	return false
}

func (p *xidParser) str() ([]byte, error) {
	p.space()
	hexForm := false
	if p.i < len(p.s) && (p.s[p.i] == 'X' || p.s[p.i] == 'x') {
		if p.i+1 < len(p.s) && p.s[p.i+1] == '\'' {
			hexForm = true
			p.i++
		}
	}
	if p.i+1 < len(p.s) && p.s[p.i] == '0' && (p.s[p.i+1] == 'x' || p.s[p.i+1] == 'X') {
		p.i += 2
		start := p.i
		for p.i < len(p.s) && isHex(p.s[p.i]) {
			p.i++
		}
		return decodeHex(p.s[start:p.i])
	}
	if p.i >= len(p.s) || p.s[p.i] != '\'' {
		return nil, fmt.Errorf("XID %q: expected a quoted or X'hex' string", p.s)
	}
	p.i++
	var out []byte
	for {
		if p.i >= len(p.s) {
			return nil, fmt.Errorf("XID %q: unterminated string", p.s)
		}
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\'' && p.i < len(p.s) && p.s[p.i] == '\'':
			out = append(out, '\'')
			p.i++
		case c == '\'':
			if hexForm {
				return decodeHex(out)
			}
			return out, nil
		case c == '\\' && !hexForm && p.i < len(p.s):
			out = append(out, p.s[p.i])
			p.i++
		default:
			out = append(out, c)
		}
	}
}

func (p *xidParser) uint() (uint32, error) {
	p.space()
	start := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	n, err := strconv.ParseUint(string(p.s[start:p.i]), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("XID %q: format id: %w", p.s, err)
	}
	return uint32(n), nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func decodeHex(h []byte) ([]byte, error) {
	out := make([]byte, hex.DecodedLen(len(h)))
	if _, err := hex.Decode(out, h); err != nil {
		return nil, fmt.Errorf("XID hex %q: %w", h, err)
	}
	return out, nil
}
