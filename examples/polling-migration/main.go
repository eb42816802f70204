// Command polling-migration is a polling outbox relay of the kind
// binlog-router replaces: the outbox table has a status column, and the
// relay repeatedly claims a batch of status 'NEW' rows, produces them to
// Kafka and marks them 'SENT'. It names its records as the router does,
// so that consumers see no difference when the router takes over (see
// README.md in this folder for the migration).
//
//	go run ./examples/polling-migration -dsn 'app:app-secret@tcp(127.0.0.1:3306)/shop' -brokers 127.0.0.1:9092
//
// One batch is one database transaction:
//
//  1. SELECT ... WHERE status = 'NEW' ORDER BY id LIMIT n FOR UPDATE SKIP LOCKED
//  2. produce every row and wait until Kafka has acknowledged all of them
//     (acks=all, idempotent producer)
//  3. UPDATE ... SET status = 'SENT' WHERE id IN (...), COMMIT
//
// A crash between 2 and 3 leaves rows in Kafka that are still 'NEW': the
// next batch publishes them again (at least once). The outbox table needs
// the column: ALTER TABLE outbox ADD COLUMN status VARCHAR(8) NOT NULL
// DEFAULT 'NEW', ADD INDEX status_id (status, id).
//
// On SIGINT or SIGTERM it finishes or abandons the batch in progress (an
// abandoned batch rolls back and stays 'NEW') and prints its counts.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Header keys binlog-router sets on every record; consumers deduplicate
// by the id header.
const (
	headerID            = "id"
	headerEventType     = "event_type"
	headerAggregateType = "aggregate_type"
)

// defaultTopicTemplate is the router's default --topic-template.
const defaultTopicTemplate = "outbox.event.{event_type}"

// config is the relay's command line.
type config struct {
	dsn     string        // go-sql-driver/mysql DSN of the application's database
	brokers []string      // Kafka seed brokers
	table   string        // outbox table, "table" or "database.table"
	topic   string        // topic template: {event_type} and {aggregate_type}
	batch   int           // rows claimed per transaction
	idle    time.Duration // wait after a batch that found no row
	// pauseBeforeMark, when positive, makes batch number pauseBeforeMark
	// stop after Kafka acknowledged it and before it is marked SENT, until
	// the relay is killed or signalled: the crash window, held open for a
	// test. The batch stays 'NEW' (it rolls back) but is in Kafka.
	pauseBeforeMark int
}

func main() {
	var c config
	var brokers string
	flag.StringVar(&c.dsn, "dsn", envOr("MYSQL_DSN", "app:app-secret@tcp(127.0.0.1:3306)/shop"),
		"go-sql-driver/mysql DSN of the application's database (env MYSQL_DSN)")
	flag.StringVar(&brokers, "brokers", envOr("KAFKA_BROKERS", "127.0.0.1:9092"), "Kafka brokers, comma separated (env KAFKA_BROKERS)")
	flag.StringVar(&c.table, "table", "outbox", "outbox table, as table or database.table")
	flag.StringVar(&c.topic, "topic-template", defaultTopicTemplate,
		"topic of a row: the router's --topic-template ({event_type} and {aggregate_type} only)")
	flag.IntVar(&c.batch, "batch", 100, "rows claimed and published per transaction")
	flag.DurationVar(&c.idle, "interval", 200*time.Millisecond, "wait after a batch that found no 'NEW' row")
	flag.IntVar(&c.pauseBeforeMark, "pause-before-mark", 0,
		"testing: after batch N is acknowledged by Kafka, wait until killed instead of marking it SENT (0: never)")
	flag.Parse()
	c.brokers = strings.Split(brokers, ",")
	log.SetFlags(0)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := zerolog.New(os.Stderr).With().Timestamp().Logger()
	r, err := newRelay(c, &logger)
	if err != nil {
		log.Fatal(err)
	}
	defer r.close()
	err = r.run(ctx)
	fmt.Printf("published %d events in %d batches\n", r.published, r.batches)
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Fatal(err)
	}
}

// relay is the polling publisher.
type relay struct {
	cfg   config
	db    *sql.DB
	kafka *kgo.Client
	log   *zerolog.Logger
	claim string // the claim query
	mark  string // the UPDATE's text up to "IN "

	batches, published int // batches and events committed as SENT
}

func newRelay(c config, logger *zerolog.Logger) (*relay, error) {
	if c.batch < 1 {
		return nil, fmt.Errorf("-batch %d: want at least 1", c.batch)
	}
	if strings.Count(c.topic, "{") != strings.Count(c.topic, "{event_type}")+strings.Count(c.topic, "{aggregate_type}") {
		return nil, fmt.Errorf("-topic-template %q: only {event_type} and {aggregate_type} are supported", c.topic)
	}
	table, err := quoteTable(c.table)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("mysql", c.dsn)
	if err != nil {
		return nil, err
	}
	kafka, err := kgo.NewClient(
		kgo.SeedBrokers(c.brokers...),
		// The Java client's default partitioner for keyed records,
		// toPositive(murmur2(key)) % partitions: the partition the router
		// picks for the same key, so one aggregate's events stay on one
		// partition across the migration.
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
		kgo.RequiredAcks(kgo.AllISRAcks()),
	)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &relay{
		cfg: c, db: db, kafka: kafka, log: logger,
		// created_at as Unix seconds with microseconds: independent of the
		// session time zone and of the DSN's parseTime.
		claim: "SELECT id, CAST(event_id AS CHAR), aggregate_type, aggregate_id, event_type, payload, UNIX_TIMESTAMP(created_at) FROM " +
			table + " WHERE status = 'NEW' ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED",
		mark: "UPDATE " + table + " SET status = 'SENT' WHERE id IN ",
	}, nil
}

func (r *relay) close() {
	r.kafka.Close()
	r.db.Close()
}

// run publishes batches until ctx ends. A failed batch rolls back (its
// rows stay 'NEW') and is retried after the interval.
func (r *relay) run(ctx context.Context) error {
	for {
		n, err := r.publishBatch(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			r.log.Error().Err(err).Msg("batch failed; its rows stay NEW and are retried")
		}
		if n > 0 && err == nil {
			continue
		}
		select {
		case <-time.After(r.cfg.idle):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// publishBatch claims up to cfg.batch 'NEW' rows, produces them, and marks
// them 'SENT' once Kafka has acknowledged every one; it returns how many
// rows it claimed. The row locks are held until the commit, so a second
// relay skips these rows instead of publishing them too.
func (r *relay) publishBatch(ctx context.Context) (int, error) {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("starting the claim transaction: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit

	ids, recs, err := r.claimRows(ctx, tx)
	if err != nil || len(recs) == 0 {
		return 0, err
	}
	if err := r.kafka.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return len(recs), fmt.Errorf("producing %d events: %w", len(recs), err)
	}
	if r.batches+1 == r.cfg.pauseBeforeMark {
		fmt.Printf("batch %d: %d events acknowledged, paused before marking them SENT\n", r.batches+1, len(recs))
		<-ctx.Done()
		return len(recs), ctx.Err()
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	q := r.mark + "(?" + strings.Repeat(", ?", len(ids)-1) + ")"
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return len(recs), fmt.Errorf("marking %d events SENT: %w", len(ids), err)
	}
	if err := tx.Commit(); err != nil {
		return len(recs), fmt.Errorf("committing %d events as SENT: %w", len(ids), err)
	}
	r.batches++
	r.published += len(recs)
	r.log.Debug().Int("events", len(recs)).Uint64("last_id", ids[len(ids)-1]).Msg("batch published")
	return len(recs), nil
}

// claimRows locks the next 'NEW' rows and returns their keys and records.
func (r *relay) claimRows(ctx context.Context, tx *sql.Tx) ([]uint64, []*kgo.Record, error) {
	rows, err := tx.QueryContext(ctx, r.claim, r.cfg.batch)
	if err != nil {
		return nil, nil, fmt.Errorf("claiming rows: %w", err)
	}
	defer rows.Close()
	var ids []uint64
	var recs []*kgo.Record
	for rows.Next() {
		var (
			id               uint64
			eventID, aggID   string
			eventType        string
			aggType, payload sql.NullString
			createdAt        string
		)
		if err := rows.Scan(&id, &eventID, &aggType, &aggID, &eventType, &payload, &createdAt); err != nil {
			return nil, nil, fmt.Errorf("reading a claimed row: %w", err)
		}
		rec, err := r.record(eventID, aggType, aggID, eventType, payload, createdAt)
		if err != nil {
			return nil, nil, fmt.Errorf("outbox row id=%d: %w", id, err)
		}
		ids = append(ids, id)
		recs = append(recs, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("claiming rows: %w", err)
	}
	return ids, recs, nil
}

// record is the Kafka record of one row, as binlog-router writes it:
// topic from the template, key aggregate_id, value payload (NULL: a
// tombstone), headers id, event_type and aggregate_type, timestamp
// created_at. The router adds headers this relay does not have
// (binlog_gtid, schema_version, ...).
func (r *relay) record(eventID string, aggType sql.NullString, aggID, eventType string, payload sql.NullString, createdAt string) (*kgo.Record, error) {
	ts, err := unixMicros(createdAt)
	if err != nil {
		return nil, fmt.Errorf("created_at %q: %w", createdAt, err)
	}
	topic := strings.NewReplacer("{event_type}", eventType, "{aggregate_type}", aggType.String).Replace(r.cfg.topic)
	rec := &kgo.Record{
		Topic:     topic,
		Key:       []byte(aggID),
		Timestamp: ts,
		Headers: []kgo.RecordHeader{
			{Key: headerID, Value: []byte(eventID)},
			{Key: headerEventType, Value: []byte(eventType)},
		},
	}
	if payload.Valid {
		rec.Value = []byte(payload.String)
	}
	if aggType.Valid {
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: headerAggregateType, Value: []byte(aggType.String)})
	}
	return rec, nil
}

// unixMicros parses UNIX_TIMESTAMP's text, "1733390000.123456".
func unixMicros(s string) (time.Time, error) {
	sec, frac, _ := strings.Cut(s, ".")
	secs, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	var micros int64
	if frac != "" {
		frac = (frac + "000000")[:6]
		if micros, err = strconv.ParseInt(frac, 10, 64); err != nil {
			return time.Time{}, err
		}
	}
	return time.Unix(secs, micros*1000), nil
}

// quoteTable quotes "table" or "database.table" for SQL.
func quoteTable(name string) (string, error) {
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return "", fmt.Errorf("-table %q: want table or database.table", name)
	}
	for i, p := range parts {
		if p == "" || strings.Contains(p, "`") {
			return "", fmt.Errorf("-table %q: want table or database.table", name)
		}
		parts[i] = "`" + p + "`"
	}
	return strings.Join(parts, "."), nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
