package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// position is a MariaDB GTID position (@@gtid_binlog_pos): the last GTID
// domain-server-seq of each replication domain. The benchmark keeps its own
// small parser so that it measures the router without sharing its code.
type position map[uint32]gtidEntry

type gtidEntry struct {
	server uint32
	seq    uint64
}

// parsePosition parses "0-1-42" or "0-1-42,1-2-7"; "" is the empty position.
func parsePosition(s string) (position, error) {
	p := position{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		f := strings.Split(part, "-")
		if len(f) != 3 {
			return nil, fmt.Errorf("gtid %q: want domain-server-seq", part)
		}
		d, err1 := strconv.ParseUint(f[0], 10, 32)
		srv, err2 := strconv.ParseUint(f[1], 10, 32)
		seq, err3 := strconv.ParseUint(f[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("gtid %q: want three decimal numbers", part)
		}
		p[uint32(d)] = gtidEntry{server: uint32(srv), seq: seq}
	}
	return p, nil
}

// covers reports whether p is at or past q in every domain of q (server
// ids are ignored, as MariaDB does).
func (p position) covers(q position) bool {
	for d, e := range q {
		if p[d].seq < e.seq {
			return false
		}
	}
	return true
}

func (p position) String() string {
	domains := make([]uint32, 0, len(p))
	for d := range p {
		domains = append(domains, d)
	}
	slices.Sort(domains)
	parts := make([]string, len(domains))
	for i, d := range domains {
		parts[i] = fmt.Sprintf("%d-%d-%d", d, p[d].server, p[d].seq)
	}
	return strings.Join(parts, ",")
}
