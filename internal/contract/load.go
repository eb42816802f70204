package contract

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// MissingPolicy is what Check does with an event type that has no
// contract (--contracts-missing).
type MissingPolicy string

const (
	// MissingAllow routes the payloads of an event type with no contract
	// unchecked.
	MissingAllow MissingPolicy = "allow"
	// MissingFail makes them row errors (ErrMissing).
	MissingFail MissingPolicy = "fail"
	// DefaultMissing is allow: turning contracts on for some event types
	// must not stop the rows of the others, which had no check before;
	// `validate` lists the event types that still have none, and fail
	// is for once it lists none.
	DefaultMissing = MissingAllow
)

// Contract is one compiled schema.
type Contract struct {
	File          string // path of the schema file: the directory given to Load joined with its name
	EventType     string // the event type it checks
	SchemaVersion string // N of <event_type>.v<N>.json without leading zeros; "" for <event_type>.json
	schema        *jsonschema.Schema
}

// Set is the contracts of one directory. A nil *Set checks nothing.
type Set struct {
	dir       string
	missing   MissingPolicy
	contracts []*Contract        // sorted by file name
	byType    map[string]*byType // event type -> its contracts
}

type byType struct {
	any      *Contract            // <event_type>.json
	versions map[string]*Contract // canonical N -> <event_type>.v<N>.json
}

// versioned matches the name of a versioned contract without ".json".
var versioned = regexp.MustCompile(`^(.+)\.v([0-9]+)$`)

// Load reads and compiles every contract of dir: the regular files of its
// top level whose names end in ".json". An empty dir means no contracts:
// Load returns nil, nil. An unknown missing policy, a directory that
// cannot be read or holds no contract, and every file that does not
// compile (not JSON, not a schema, a $ref that does not resolve) are
// errors, all reported at once, each naming its file.
func Load(dir string, missing MissingPolicy) (*Set, error) {
	if dir == "" {
		return nil, nil
	}
	if missing == "" {
		missing = DefaultMissing
	}
	if missing != MissingAllow && missing != MissingFail {
		return nil, fmt.Errorf("--contracts-missing %q: use allow or fail", missing)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("--contracts-dir: reading the contracts: %w", err)
	}
	s := &Set{dir: dir, missing: missing, byType: make(map[string]*byType)}
	c := jsonschema.NewCompiler()
	var errs []error
	for _, e := range entries {
		name := e.Name()
		base, ok := strings.CutSuffix(name, ".json")
		if !ok || base == "" || !e.Type().IsRegular() {
			continue
		}
		k := &Contract{File: filepath.Join(dir, name), EventType: base}
		if m := versioned.FindStringSubmatch(base); m != nil {
			k.EventType = m[1]
			k.SchemaVersion, _ = canonicalVersion(m[2])
		}
		abs, err := filepath.Abs(k.File)
		if err == nil {
			k.schema, err = c.Compile(abs)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("--contracts-dir: contract %s does not compile: %w; fix the schema or its $ref", k.File, err))
			continue
		}
		bt := s.byType[k.EventType]
		if bt == nil {
			bt = &byType{versions: make(map[string]*Contract)}
			s.byType[k.EventType] = bt
		}
		if k.SchemaVersion == "" {
			bt.any = k
		} else {
			if prev := bt.versions[k.SchemaVersion]; prev != nil {
				errs = append(errs, fmt.Errorf("--contracts-dir: contracts %s and %s are both for event_type %q schema_version %s; keep one",
					prev.File, k.File, k.EventType, k.SchemaVersion))
				continue
			}
			bt.versions[k.SchemaVersion] = k
		}
		s.contracts = append(s.contracts, k)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(s.contracts) == 0 {
		return nil, fmt.Errorf("--contracts-dir %s holds no contract: add <event_type>.json files, or leave --contracts-dir empty", dir)
	}
	sort.Slice(s.contracts, func(i, j int) bool { return s.contracts[i].File < s.contracts[j].File })
	return s, nil
}

// Dir is the directory the contracts were read from.
func (s *Set) Dir() string { return s.dir }

// Missing is the policy for event types with no contract.
func (s *Set) Missing() MissingPolicy { return s.missing }

// Contracts returns the contracts, sorted by file. The caller must not
// modify them.
func (s *Set) Contracts() []*Contract {
	if s == nil {
		return nil
	}
	return s.contracts
}

// Has reports whether eventType has a contract of any version.
func (s *Set) Has(eventType string) bool {
	if s == nil {
		return false
	}
	_, ok := s.byType[eventType]
	return ok
}

// canonicalVersion returns v without leading zeros if v is decimal
// digits ("007" -> "7", "0" -> "0"), else false.
func canonicalVersion(v string) (string, bool) {
	if v == "" {
		return "", false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return "", false
		}
	}
	t := strings.TrimLeft(v, "0")
	if t == "" {
		t = "0"
	}
	return t, true
}

// canonicalVersionBytes is canonicalVersion of a column's bytes, without
// allocating: a subslice of v.
func canonicalVersionBytes(v []byte) ([]byte, bool) {
	if len(v) == 0 {
		return nil, false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return nil, false
		}
	}
	t := bytes.TrimLeft(v, "0")
	if len(t) == 0 {
		t = v[len(v)-1:]
	}
	return t, true
}
