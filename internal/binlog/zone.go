package binlog

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // zone names resolve without the system's zoneinfo (distroless images)
)

// offsetZone is a time zone given as an offset from UTC, as the servers'
// time_zone spells it: +05:00, -03:30.
var offsetZone = regexp.MustCompile(`^([+-])(\d{1,2}):(\d{2})$`)

// ParseZone reads a time zone as --datetime-zone and the servers'
// time_zone variable give it: an offset from UTC (+05:00, -03:30), UTC,
// or an IANA zone name (Europe/Berlin), whose rules (daylight saving
// time) apply to each value.
func ParseZone(name string) (*time.Location, error) {
	if m := offsetZone.FindStringSubmatch(name); m != nil {
		h, _ := strconv.Atoi(m[2])
		min, _ := strconv.Atoi(m[3])
		if h > 14 || min > 59 {
			return nil, fmt.Errorf("time zone %q: the offset is out of range (-14:00 to +14:00)", name)
		}
		off := h*3600 + min*60
		if m[1] == "-" {
			off = -off
		}
		return time.FixedZone(name, off), nil
	}
	if strings.EqualFold(name, "UTC") {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "" || name == "Local" {
		return nil, fmt.Errorf("time zone %q is neither an offset like +05:00 nor a zone name like Europe/Berlin", name)
	}
	return loc, nil
}

// utcNames are the system zone names that mean UTC itself.
var utcNames = map[string]bool{"UTC": true, "GMT": true, "UCT": true, "Etc/UTC": true, "Etc/GMT": true,
	"Universal": true, "Zulu": true, "Coordinated Universal Time": true}

// DatetimeZone is the time zone the server's sessions read and write
// DATETIME values in by default, from @@global.time_zone: an offset or a
// zone name as it is; SYSTEM is the zone of the server's host, which
// @@system_time_zone names only by an abbreviation (CET, EST, IST) that
// does not say its rules, so only UTC is taken from it. The error says
// why the zone is not known.
func (s *Server) DatetimeZone() (*time.Location, error) {
	switch {
	case s.TimeZone == "":
		return nil, fmt.Errorf("the server's time_zone could not be read")
	case !strings.EqualFold(s.TimeZone, "SYSTEM"):
		loc, err := ParseZone(s.TimeZone)
		if err != nil {
			return nil, fmt.Errorf("the server's time_zone: %w", err)
		}
		return loc, nil
	case utcNames[s.SystemTimeZone]:
		return time.UTC, nil
	}
	return nil, fmt.Errorf("the server's time_zone is SYSTEM and its system_time_zone %q is an abbreviation, which does not say the zone's rules", s.SystemTimeZone)
}
