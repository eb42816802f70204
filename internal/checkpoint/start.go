package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rs/zerolog"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/gtid"
)

// ErrInvalidStart means --start names a position the router cannot start
// from on this server: bad usage, to be corrected, never a guess.
var ErrInvalidStart = errors.New("invalid --start")

// The start positions of --start besides "gtid:<set>".
const (
	// StartEarliest starts at the oldest binlog the server has.
	StartEarliest = "earliest"
	// StartLatest starts after everything the server has executed.
	StartLatest = "latest"
)

// startGTID prefixes an explicit GTID set in --start.
const startGTID = "gtid:"

// startMode is what kind of position a --start names.
type startMode int

const (
	startEarliest startMode = iota
	startLatest
	startSet
)

// parseStart is the one reading of --start: its mode and, for
// "gtid:<set>", the set's text.
func parseStart(start string) (startMode, string, error) {
	switch {
	case start == StartEarliest:
		return startEarliest, "", nil
	case start == StartLatest:
		return startLatest, "", nil
	case strings.HasPrefix(start, startGTID):
		return startSet, strings.TrimPrefix(start, startGTID), nil
	}
	return 0, "", fmt.Errorf("--start %q: use earliest, latest or gtid:<set>", start)
}

// CheckStart reports whether start is a --start the router understands,
// without asking a server (StartAt checks the position itself).
func CheckStart(start string) error {
	_, _, err := parseStart(start)
	return err
}

// StartAt resolves --start on reader's server, for a router without a
// stored checkpoint, and checks it as `checkpoint set` checks a set:
//
//   - "earliest" is the oldest binlog the server has; when older
//     transactions were purged, it logs the position and that they are
//     gone;
//   - "latest" is after everything the server has executed;
//   - "gtid:<set>" must parse, must not be empty (that is "earliest"), and
//     must pass checkpoint.CheckServable (no domain, server UUID or
//     sequence the server never executed; the binlog after it still
//     there).
//
// Every refusal wraps ErrInvalidStart and says how to correct --start.
func StartAt(ctx context.Context, start string, reader *binlog.Reader, log zerolog.Logger) (*gtid.Set, error) {
	server := reader.Server()
	mode, _, err := parseStart(start)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidStart, err)
	}
	switch mode {
	case startEarliest:
		return earliest(ctx, reader, log)
	case startSet:
		set, err := ResolveStart(start, server)
		if err != nil {
			return nil, fmt.Errorf("%w: %w; write the set in the server's syntax, as SELECT @@gtid_binlog_pos (MariaDB) or @@gtid_executed (MySQL) prints it", ErrInvalidStart, err)
		}
		if set.IsEmpty() {
			return nil, fmt.Errorf("%w: --start %q is an empty GTID set: use --start earliest to start at the oldest binlog the server has", ErrInvalidStart, start)
		}
		if err := CheckServable(ctx, reader, set); err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%w: refusing --start %q: %w; correct --start (the server is at %q), or use --start earliest or latest", ErrInvalidStart, start, err, server.Executed)
		}
		return set, nil
	}
	return ResolveStart(start, server)
}

// earliest returns the position before the oldest binlog the server has
// and, when transactions before it were purged, logs that they are gone.
func earliest(ctx context.Context, reader *binlog.Reader, log zerolog.Logger) (*gtid.Set, error) {
	server := reader.Server()
	file, before := "", server.Purged
	if server.Flavor == gtid.MariaDB {
		// An empty MariaDB position only works while the server still has
		// its very first binlog; start where its oldest binlog starts.
		var err error
		if file, before, err = binlog.OldestMariaDB(ctx, reader.DB()); err != nil {
			return nil, fmt.Errorf("finding the oldest binlog for --start earliest: %w", err)
		}
	}
	if !before.IsEmpty() {
		log.Warn().Str("oldest_binlog", file).Str("gtid_set", before.String()).
			Msg("--start earliest: starting at the oldest binlog the server has; the transactions before it (up to this GTID set) were purged and are gone: their outbox rows are not published")
	}
	return before.Clone(), nil
}

// ResolveStart turns --start into a GTID set for a server without a
// stored checkpoint, without asking the server: "earliest" is everything
// the server still has, "latest" is after everything it has executed,
// "gtid:<set>" is explicit.
func ResolveStart(start string, server *binlog.Server) (*gtid.Set, error) {
	mode, text, err := parseStart(start)
	if err != nil {
		return nil, err
	}
	switch mode {
	case startEarliest:
		// MySQL cannot send purged transactions: start after them. An
		// empty MariaDB position starts at the first binlog ever written
		// (the relay asks the server for its oldest binlog instead).
		if server.Flavor == gtid.MySQL {
			return server.Purged.Clone(), nil
		}
		return gtid.New(server.Flavor), nil
	case startLatest:
		return server.Executed.Clone(), nil
	}
	set, err := gtid.Parse(server.Flavor, text)
	if err != nil {
		return nil, fmt.Errorf("--start: %w", err)
	}
	return set, nil
}
