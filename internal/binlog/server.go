package binlog

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/binlog-router/binlog-router/internal/gtid"
)

// Server is what the router needs to know about the source server, read
// over a normal SQL connection at connect time.
type Server struct {
	Version     string      // SELECT VERSION()
	Flavor      gtid.Flavor // detected from the version string
	ServerID    uint32      // @@server_id
	ServerUUID  string      // @@server_uuid (MySQL only)
	LogBin      bool        // @@log_bin
	Format      string      // @@binlog_format
	RowImage    string      // @@binlog_row_image
	RowMetadata string      // @@binlog_row_metadata ("" when the server has none)
	GTIDMode    string      // @@gtid_mode (MySQL); "ON" for MariaDB, which always has GTIDs
	GTIDStrict  bool        // MariaDB @@gtid_strict_mode (sequence numbers grow within a domain); true for MySQL, whose GTID sets are exact
	Executed    *gtid.Set   // MySQL @@gtid_executed; MariaDB @@gtid_binlog_pos
	Purged      *gtid.Set   // MySQL @@gtid_purged; empty for MariaDB

	TimeZone       string // @@global.time_zone: SYSTEM, an offset (+05:00) or a zone name; "" when not read
	SystemTimeZone string // @@global.system_time_zone: the host's zone, as an abbreviation
}

// Inspect reads the server's identity, binlog settings and GTID state.
func Inspect(ctx context.Context, db *sql.DB) (*Server, error) {
	s := &Server{}
	if err := db.QueryRowContext(ctx, "SELECT VERSION(), @@server_id, @@log_bin, @@binlog_format, @@binlog_row_image").
		Scan(&s.Version, &s.ServerID, &s.LogBin, &s.Format, &s.RowImage); err != nil {
		return nil, fmt.Errorf("reading server settings: %w", err)
	}
	s.Flavor = gtid.MySQL
	if strings.Contains(strings.ToLower(s.Version), "mariadb") {
		s.Flavor = gtid.MariaDB
	}
	// binlog_row_metadata exists from MySQL 8.0.1 and MariaDB 10.5.
	var meta sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT @@binlog_row_metadata").Scan(&meta); err == nil {
		s.RowMetadata = meta.String
	}
	var tz, systemTZ sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT @@global.time_zone, @@global.system_time_zone").Scan(&tz, &systemTZ); err == nil {
		s.TimeZone, s.SystemTimeZone = tz.String, systemTZ.String
	}
	var executed, purged string
	switch s.Flavor {
	case gtid.MariaDB:
		s.GTIDMode = "ON"
		if err := db.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos, @@gtid_strict_mode").Scan(&executed, &s.GTIDStrict); err != nil {
			return nil, fmt.Errorf("reading @@gtid_binlog_pos: %w", err)
		}
	default:
		s.GTIDStrict = true
		if err := db.QueryRowContext(ctx, "SELECT @@server_uuid, @@gtid_mode, @@gtid_executed, @@gtid_purged").
			Scan(&s.ServerUUID, &s.GTIDMode, &executed, &purged); err != nil {
			return nil, fmt.Errorf("reading GTID state: %w", err)
		}
	}
	var err error
	if s.Executed, err = gtid.Parse(s.Flavor, executed); err != nil {
		return nil, fmt.Errorf("server's executed GTID set: %w", err)
	}
	if s.Purged, err = gtid.Parse(s.Flavor, purged); err != nil {
		return nil, fmt.Errorf("server's purged GTID set: %w", err)
	}
	return s, nil
}

// Check returns an error wrapping ErrServerConfig, naming every setting
// that prevents routing and how to fix it, or nil.
func (s *Server) Check() error {
	var bad []string
	if !s.LogBin {
		bad = append(bad, "binary logging is off (start the server with --log-bin)")
	}
	if !strings.EqualFold(s.Format, "ROW") {
		bad = append(bad, fmt.Sprintf("binlog_format is %s (set binlog_format=ROW)", s.Format))
	}
	if !strings.EqualFold(s.RowImage, "FULL") {
		bad = append(bad, fmt.Sprintf("binlog_row_image is %s (set binlog_row_image=FULL)", s.RowImage))
	}
	if s.Flavor == gtid.MySQL && !strings.EqualFold(s.GTIDMode, "ON") {
		bad = append(bad, fmt.Sprintf("gtid_mode is %s (set gtid_mode=ON and enforce_gtid_consistency=ON)", s.GTIDMode))
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrServerConfig, strings.Join(bad, "; "))
}

// FullMetadata reports whether TABLE_MAP events carry column names.
func (s *Server) FullMetadata() bool { return strings.EqualFold(s.RowMetadata, "FULL") }
