package gtid

import "strings"

// maxTagLen is the longest tag MySQL 8.4 accepts.
const maxTagLen = 32

// ValidTag reports whether tag is a MySQL 8.4 GTID tag: a letter or '_'
// followed by at most 31 letters, digits or '_', in any case. The empty
// string is not a tag (it stands for "untagged" in AddMySQL).
func ValidTag(tag string) bool {
	if len(tag) == 0 || len(tag) > maxTagLen || !isTagStart(tag[0]) {
		return false
	}
	for i := 1; i < len(tag); i++ {
		if !isTagByte(tag[i]) {
			return false
		}
	}
	return true
}

func isTagStart(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func isTagByte(c byte) bool { return isTagStart(c) || isDigit(c) }

// normalTag lower-cases tag; it allocates only when tag has upper case.
func normalTag(tag string) string {
	for i := 0; i < len(tag); i++ {
		if 'A' <= tag[i] && tag[i] <= 'Z' {
			return strings.ToLower(tag)
		}
	}
	return tag
}
