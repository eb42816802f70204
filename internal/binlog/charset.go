package binlog

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/charset"

	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// binaryCollation is the collation id of the binary character set.
const binaryCollation = 63

// charsetOf names the character set of collation id coll as flavor's
// servers number collations, from the servers' documented ids:
//
//   - below 256: the same on MySQL and MariaDB (the TiDB parser's table of
//     MySQL's collations);
//   - MySQL 255 to 323: the utf8mb4 0900 collations (utf8mb4_0900_ai_ci,
//     utf8mb4_0900_bin, ..., utf8mb4_mn_cyrl_0900_as_cs of 8.0.30);
//   - MariaDB 576 to 767: 32 ids per Unicode character set
//     (MY_PAGE2_COLLATION_ID_UTF8 ... _UTF32: utf8mb3, utf8mb4, ucs2,
//     utf16, utf16le, utf32);
//   - MariaDB 1024 to 2047: the NO PAD variant of collation id-1024;
//   - MariaDB 2048 to 4095: the UCA 14.0.0 collations, whose bits 8 to 10
//     number the character set (utf8mb3, utf8mb4, ucs2, utf16, utf32).
//
// ok is false for an id outside these ranges.
func charsetOf(flavor gtid.Flavor, coll uint64) (name string, ok bool) {
	if coll < 256 {
		return lowCollations[coll], lowCollations[coll] != ""
	}
	if flavor != gtid.MariaDB {
		if coll <= 323 {
			return "utf8mb4", true
		}
		return "", false
	}
	switch {
	case coll >= 576 && coll < 768:
		return []string{"utf8mb3", "utf8mb4", "ucs2", "utf16", "utf16le", "utf32"}[(coll-576)/32], true
	case coll >= 1024 && coll < 2048:
		return charsetOf(flavor, coll-1024)
	case coll >= 2048 && coll < 4096:
		if cs := (coll >> 8) & 7; cs < 5 {
			return []string{"utf8mb3", "utf8mb4", "ucs2", "utf16", "utf32"}[cs], true
		}
	}
	return "", false
}

// textDecoder converts text stored in a character set other than UTF-8
// to UTF-8, appending to dst. Bytes that hold no character of the set are
// an error, never replaced.
type textDecoder func(dst, src []byte) ([]byte, error)

// isUTF8Charset: text already in UTF-8 (or ASCII), checked, not converted.
func isUTF8Charset(cs string) bool {
	return cs == "utf8mb3" || cs == "utf8mb4" || cs == "ascii"
}

// decoderFor returns how text in character set cs becomes UTF-8; ok is
// false for a set the router cannot convert.
func decoderFor(cs string) (textDecoder, bool) {
	switch cs {
	case "utf16":
		return decodeUTF16(binary.BigEndian), true
	case "utf16le":
		return decodeUTF16(binary.LittleEndian), true
	case "ucs2":
		return decodeUCS2, true
	case "utf32":
		return decodeUTF32, true
	}
	t, ok := singleByte[cs]
	if !ok {
		return nil, false
	}
	return t.decode, true
}

// byteTable maps each byte of a single-byte character set to its
// character; -1 where the set has none.
type byteTable [256]rune

// singleByte are the tables of singleByteChars.
var singleByte = func() map[string]*byteTable {
	out := map[string]*byteTable{}
	for name, chars := range singleByteChars {
		t := &byteTable{}
		i := 0
		for _, r := range chars {
			if r == utf8.RuneError {
				r = -1
			}
			t[i] = r
			i++
		}
		if i != 256 {
			panic("binlog: the table of " + name + " has " + fmt.Sprint(i) + " characters")
		}
		out[name] = t
	}
	return out
}()

func (t *byteTable) decode(dst, src []byte) ([]byte, error) {
	for _, b := range src {
		r := t[b]
		if r < 0 {
			return nil, fmt.Errorf("byte 0x%02x holds no character of the column's character set", b)
		}
		dst = utf8.AppendRune(dst, r)
	}
	return dst, nil
}

func decodeUTF16(order binary.ByteOrder) textDecoder {
	return func(dst, src []byte) ([]byte, error) {
		if len(src)%2 != 0 {
			return nil, fmt.Errorf("%d bytes are not whole UTF-16 code units", len(src))
		}
		for i := 0; i < len(src); i += 2 {
			r := rune(order.Uint16(src[i:]))
			switch {
			case r >= 0xd800 && r < 0xdc00 && i+4 <= len(src):
				lo := rune(order.Uint16(src[i+2:]))
				if lo < 0xdc00 || lo >= 0xe000 {
					return nil, fmt.Errorf("UTF-16 high surrogate 0x%04x at byte %d is not followed by a low one", r, i)
				}
				r = 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00)
				i += 2
			case r >= 0xd800 && r < 0xe000:
				return nil, fmt.Errorf("lone UTF-16 surrogate 0x%04x at byte %d", r, i)
			}
			dst = utf8.AppendRune(dst, r)
		}
		return dst, nil
	}
}

func decodeUCS2(dst, src []byte) ([]byte, error) {
	if len(src)%2 != 0 {
		return nil, fmt.Errorf("%d bytes are not whole UCS-2 characters", len(src))
	}
	for i := 0; i < len(src); i += 2 {
		r := rune(binary.BigEndian.Uint16(src[i:]))
		if r >= 0xd800 && r < 0xe000 {
			return nil, fmt.Errorf("UCS-2 code 0x%04x at byte %d is a surrogate, no character", r, i)
		}
		dst = utf8.AppendRune(dst, r)
	}
	return dst, nil
}

func decodeUTF32(dst, src []byte) ([]byte, error) {
	if len(src)%4 != 0 {
		return nil, fmt.Errorf("%d bytes are not whole UTF-32 characters", len(src))
	}
	for i := 0; i < len(src); i += 4 {
		r := binary.BigEndian.Uint32(src[i:])
		if r > utf8.MaxRune || r >= 0xd800 && r < 0xe000 {
			return nil, fmt.Errorf("UTF-32 code 0x%08x at byte %d is no character", r, i)
		}
		dst = utf8.AppendRune(dst, rune(r))
	}
	return dst, nil
}

// serverCharsets are the character sets of MySQL 8 and MariaDB 10.11
// (SHOW CHARACTER SET), as information_schema spells them.
var serverCharsets = []string{"armscii8", "ascii", "big5", "binary", "cp1250", "cp1251", "cp1256", "cp1257",
	"cp850", "cp852", "cp866", "cp932", "dec8", "eucjpms", "euckr", "gb18030", "gb2312", "gbk", "geostd8",
	"greek", "hebrew", "hp8", "keybcs2", "koi8r", "koi8u", "latin1", "latin2", "latin5", "latin7", "macce",
	"macroman", "sjis", "swe7", "tis620", "ucs2", "ujis", "utf16", "utf16le", "utf32", "utf8mb3", "utf8mb4"}

// tidbName is the TiDB parser's name of a character set (utf8 for utf8mb3).
func tidbName(cs string) string {
	if cs == "utf8mb3" {
		return charset.CharsetUTF8
	}
	return cs
}

// lowCollations and maxLens are copied from the TiDB parser's tables at
// start, before parseDDL adds to them: they are read without its lock.
var (
	// lowCollations names the character set of each collation id below 256.
	lowCollations = func() (t [256]string) {
		for id := range t {
			if c, err := charset.GetCollationByID(id); err == nil {
				t[id] = schema.CanonicalCharset(c.CharsetName)
			}
		}
		return t
	}()
	// maxLens is the most bytes a character of each server character
	// set takes.
	maxLens = func() map[string]int {
		out := map[string]int{}
		for _, cs := range serverCharsets {
			if c, _ := charset.GetCharsetInfo(tidbName(cs)); c != nil && c.Maxlen > 0 { // also sets TiDB does not support
				out[cs] = c.Maxlen
			}
		}
		return out
	}()
)

// charsetMaxLen is the most bytes a character of character set cs takes.
func charsetMaxLen(cs string) (int, bool) {
	n, ok := maxLens[cs]
	return n, ok
}

// Convertible reports whether the router publishes text of character set
// cs (as information_schema names it): UTF-8 and ASCII as they are, binary
// strings as their bytes, the single-byte and Unicode sets converted to
// UTF-8.
func Convertible(cs string) bool {
	if isUTF8Charset(cs) || cs == "binary" {
		return true
	}
	_, ok := decoderFor(cs)
	return ok
}
