package gtid

// uuidLen is the length of a uuid in text: 8-4-4-4-12 hex digits.
const uuidLen = 36

const hexDigits = "0123456789abcdef"

// uuidHexAt is where each byte's two hex digits start in the dashed form.
var uuidHexAt = [16]int{0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34}

// parseUUID decodes the 36-byte dashed form, either case. MySQL also
// accepts the braced and the dash-less forms; servers never print them, so
// neither do we accept them: a checkpoint written by us or copied from
// @@gtid_executed is always dashed.
func parseUUID(s string) (sid [16]byte, ok bool) {
	if len(s) != uuidLen || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return sid, false
	}
	for j, i := range uuidHexAt {
		hi, ok1 := unhex(s[i])
		lo, ok2 := unhex(s[i+1])
		if !ok1 || !ok2 {
			return sid, false
		}
		sid[j] = hi<<4 | lo
	}
	return sid, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// appendUUID appends sid in lower-case dashed form.
func appendUUID(dst []byte, sid [16]byte) []byte {
	var buf [uuidLen]byte
	j := 0
	for i, b := range sid {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			buf[j] = '-'
			j++
		}
		buf[j] = hexDigits[b>>4]
		buf[j+1] = hexDigits[b&0x0f]
		j += 2
	}
	return append(dst, buf[:]...)
}
