package validate

import (
	"strconv"
	"strings"
)

// version is a server's major.minor.patch.
type version struct{ major, minor, patch int }

// parseVersion reads the leading major.minor.patch of SELECT VERSION():
// "10.11.19-MariaDB-0+deb12u1", "8.0.36-log", and the "5.5.5-10.6.1-MariaDB"
// prefix some proxies add. Missing parts are 0.
func parseVersion(s string) version {
	s = strings.TrimPrefix(s, "5.5.5-")
	var n [3]int
	for i, part := range strings.SplitN(s, ".", 3) {
		end := 0
		for end < len(part) && '0' <= part[end] && part[end] <= '9' {
			end++
		}
		n[i], _ = strconv.Atoi(part[:end])
		if end < len(part) {
			break
		}
	}
	return version{n[0], n[1], n[2]}
}

func (v version) atLeast(major, minor, patch int) bool {
	if v.major != major {
		return v.major > major
	}
	if v.minor != minor {
		return v.minor > minor
	}
	return v.patch >= patch
}
