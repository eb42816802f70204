package route

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/contract"
	"github.com/binlog-router/binlog-router/internal/jsonscan"
)

// Config configures a Router. Start from DefaultConfig.
type Config struct {
	// TopicTemplate names the topic of each record. Placeholders:
	// {event_type}, {aggregate_type}, {database}, {table}. Literal text must
	// be legal in a topic name. Default DefaultTopicTemplate; empty means
	// the default.
	TopicTemplate string
	// ValidateJSON (--validate-json) makes a non-NULL payload that is not
	// valid JSON, or not UTF-8 (RFC 8259), a row error
	// (KindInvalidPayloadJSON). Default true. It costs a scan of the
	// payload (BenchmarkRecord), which a row the binlog reader has
	// already found JSON (binlog.OutboxRow.PayloadJSON) is spared.
	ValidateJSON bool
	// RequireUUID (--require-uuid) makes an event_id that is not a
	// canonical 36-character UUID a row error (KindInvalidEventID).
	// Default true. The binlog package turns 16-byte binary ids into UUID
	// text before.
	RequireUUID bool
	// Envelope (--envelope) is how the record carries the event:
	// EnvelopePlain, EnvelopeCloudEvents or EnvelopeCloudEventsStructured
	// (see the package documentation). Default, and when empty,
	// DefaultEnvelope (plain).
	Envelope Envelope
	// CloudEventsSource (--cloudevents-source) is the CloudEvents source
	// attribute, a URI reference with the placeholders {database} and
	// {table} (each replaced by the outbox table's name, percent-encoded).
	// Default, and when empty, DefaultCloudEventsSource. Used only by the
	// CloudEvents envelopes, checked always.
	CloudEventsSource string
	// Contracts (--contracts-dir, --contracts-missing) are the JSON
	// Schemas the payloads are checked against, last of the row's checks;
	// a violation is a row error of kind contract_violation, an event type
	// without a contract under --contracts-missing=fail one of kind
	// contract_missing. Default nil: no check. See BenchmarkRecord for its
	// cost.
	Contracts *contract.Set
}

// DefaultConfig returns the defaults: DefaultTopicTemplate, ValidateJSON and
// RequireUUID on.
func DefaultConfig() Config {
	return Config{TopicTemplate: DefaultTopicTemplate, ValidateJSON: true, RequireUUID: true}
}

// Validate reports a configuration error, as New would.
func (c Config) Validate() error {
	_, err := New(c)
	return err
}

func (c Config) template() string {
	if c.TopicTemplate == "" {
		return DefaultTopicTemplate
	}
	return c.TopicTemplate
}

// maxCacheEntries bounds each cache of a Router; a full cache is emptied.
const maxCacheEntries = 4096

// Router turns outbox rows into Kafka records.
//
// A Router is not safe for concurrent use: it caches topic names, header
// keys and scratch buffers between calls. Use one Router per goroutine.
type Router struct {
	cfg  Config
	tmpl *template

	topics map[string]string // cache key of the template's fields -> topic
	keys   map[string]string // interned header keys of the headers column

	keyBuf, topicBuf []byte // scratch for topic cache keys and topic names
	unescaped        []byte // scratch for unescaped header keys
	extra            []kgo.RecordHeader

	gtid      string // GTID of the last transaction seen
	gtidBytes []byte // gtid as a header value, shared by its records

	src     *sourceTemplate     // the CloudEvents source
	sources map[tableKey][]byte // expanded sources by table
}

// New returns a Router for cfg. An error wraps ErrInvalidTemplate or
// ErrInvalidEnvelope.
func New(cfg Config) (*Router, error) {
	t, err := parseTemplate(cfg.template())
	if err != nil {
		return nil, err
	}
	cfg.TopicTemplate = t.text
	if cfg.Envelope, err = ParseEnvelope(string(cfg.Envelope)); err != nil {
		return nil, err
	}
	src, err := parseSource(cfg.CloudEventsSource)
	if err != nil {
		return nil, err
	}
	cfg.CloudEventsSource = src.text
	return &Router{
		cfg:       cfg,
		tmpl:      t,
		topics:    make(map[string]string),
		keys:      make(map[string]string),
		gtidBytes: []byte{},
		src:       src,
		sources:   make(map[tableKey][]byte),
	}, nil
}

// Route builds the Kafka record of one outbox row of transaction txn (see
// the package documentation for the contract). The error, if any, is a
// *RowError; the same row always gives the same error. The record's Key,
// Value and most header values alias the row's bytes. row must not be nil;
// a nil txn is treated as an empty Txn.
func (r *Router) Route(row *binlog.OutboxRow, txn *binlog.Txn) (*kgo.Record, error) {
	if txn == nil {
		txn = &binlog.Txn{}
	}
	if p := r.check(row); p != nil {
		return nil, rowError(row, txn, p)
	}
	topic, p := r.topic(row)
	if p != nil {
		return nil, rowError(row, txn, p)
	}
	n := 3 // id, event_type, binlog_gtid
	if row.AggregateType != nil {
		n++
	}
	if row.SchemaVersion != nil {
		n++
	}
	if row.Traceparent != nil {
		n++
	}
	if row.Headers != nil {
		r.extra, p = r.appendObjectHeaders(r.extra[:0], row.Headers)
		if p == nil && r.cfg.Envelope.cloudEvents() {
			p = checkExtensions(r.extra)
		}
		if p != nil {
			clear(r.extra)
			return nil, rowError(row, txn, p)
		}
		n += len(r.extra)
	}
	members := r.extra[:0]
	if row.Headers != nil {
		members = r.extra
	}
	defer clear(members) // drop references to the row
	if r.cfg.Envelope == EnvelopeCloudEvents {
		n += ceHeaderCount(row, len(members))
	} else if r.cfg.Envelope == EnvelopeCloudEventsStructured {
		n++ // content-type
	}
	rec, hs := newRecord(n)
	hs = append(hs,
		kgo.RecordHeader{Key: HeaderID, Value: row.EventID},
		kgo.RecordHeader{Key: HeaderEventType, Value: row.EventType})
	if row.AggregateType != nil {
		hs = append(hs, kgo.RecordHeader{Key: HeaderAggregateType, Value: row.AggregateType})
	}
	if row.SchemaVersion != nil {
		hs = append(hs, kgo.RecordHeader{Key: HeaderSchemaVersion, Value: row.SchemaVersion})
	}
	if row.Traceparent != nil {
		hs = append(hs, kgo.RecordHeader{Key: HeaderTraceparent, Value: row.Traceparent})
	}
	hs = append(hs, members...)
	if txn.GTID != r.gtid {
		r.gtid, r.gtidBytes = txn.GTID, []byte(txn.GTID)
	}
	hs = append(hs, kgo.RecordHeader{Key: HeaderBinlogGTID, Value: r.gtidBytes})

	ts := row.CreatedAt
	if ts.IsZero() {
		ts = txn.Time
	}
	value := row.Payload
	switch r.cfg.Envelope {
	case EnvelopeCloudEvents:
		hs = r.appendBinaryMode(hs, row, ts, members)
	case EnvelopeCloudEventsStructured:
		hs = append(hs, kgo.RecordHeader{Key: HeaderContentType, Value: cloudEventsContentType})
		value = r.structuredValue(row, ts, members)
	}
	rec.Topic, rec.Key, rec.Value, rec.Headers, rec.Timestamp = topic, row.AggregateID, value, hs, ts
	return rec, nil
}

// A record and its headers in one allocation: half the allocations (and
// garbage collector work) of a record per row. recordBox4 holds the plain
// envelope's usual headers (id, event_type, aggregate_type, binlog_gtid)
// in 320 bytes; recordBox6 schema_version and traceparent too, or as many
// from the headers column, in 416.
type (
	recordBox4 struct {
		rec     kgo.Record
		headers [4]kgo.RecordHeader
	}
	recordBox6 struct {
		rec     kgo.Record
		headers [6]kgo.RecordHeader
	}
)

// newRecord returns an empty record and an empty header slice of capacity
// n for it, in one allocation up to 6 headers. The slice's capacity is
// exactly n, so that appending to a record's headers never writes to
// memory another record uses.
func newRecord(n int) (*kgo.Record, []kgo.RecordHeader) {
	switch {
	case n <= 4:
		b := new(recordBox4)
		return &b.rec, b.headers[:0:n]
	case n <= 6:
		b := new(recordBox6)
		return &b.rec, b.headers[:0:n]
	}
	return new(kgo.Record), make([]kgo.RecordHeader, 0, n)
}

// check validates the row's columns in the documented order.
func (r *Router) check(row *binlog.OutboxRow) *problem {
	// A payload with a contract is read once: the contract's decoding
	// also says whether it is JSON in UTF-8, as jsonscan.Valid would.
	var k *contract.Contract
	if r.cfg.Contracts != nil && row.Payload != nil {
		k = r.cfg.Contracts.Lookup(row.EventType, row.SchemaVersion)
	}
	strict := r.cfg.ValidateJSON && k != nil
	switch {
	case len(row.EventID) == 0:
		return newProblem(KindNullEventID, ErrNullEventID,
			"event_id is "+nullOrEmpty(row.EventID)+"; every outbox row needs a unique event_id (a UUID)")
	case r.cfg.RequireUUID && !isUUID(row.EventID):
		return newProblem(KindInvalidEventID, ErrInvalidEventID, "event_id "+display(string(row.EventID))+
			" is not a UUID in canonical 36-character form (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx); write UUIDs, or run with --require-uuid=false")
	case len(row.AggregateID) == 0:
		return newProblem(KindNullAggregateID, ErrNullAggregateID, "aggregate_id is "+nullOrEmpty(row.AggregateID)+
			"; every outbox row needs an aggregate_id (it is the Kafka key)")
	case len(row.EventType) == 0:
		return newProblem(KindNullEventType, ErrNullEventType, "event_type is "+nullOrEmpty(row.EventType)+
			"; every outbox row needs an event_type")
	case r.cfg.ValidateJSON && row.Payload != nil && !strict && !row.PayloadJSON && !jsonscan.Valid(row.Payload):
		return invalidJSON(row.Payload)
	}
	switch {
	case strict:
		err := k.CheckStrict(row.Payload)
		if errors.Is(err, contract.ErrNotJSON) {
			return invalidJSON(row.Payload)
		}
		return contractProblem(err)
	case k != nil:
		return contractProblem(k.Check(row.Payload))
	case r.cfg.Contracts != nil:
		return contractProblem(r.cfg.Contracts.Check(row.EventType, row.SchemaVersion, row.Payload))
	}
	return nil
}

// invalidJSON is the problem of a payload that is not JSON in UTF-8
// under ValidateJSON.
func invalidJSON(payload []byte) *problem {
	return newProblem(KindInvalidPayloadJSON, ErrInvalidPayloadJSON, fmt.Sprintf(
		"payload (%d bytes) is not valid JSON in UTF-8; write JSON or NULL, or run with --validate-json=false", len(payload)))
}

// contractProblem is the row's problem of a contract check's error.
func contractProblem(err error) *problem {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, contract.ErrMissing):
		return newProblem(KindContractMissing, ErrContractMissing, err.Error())
	default:
		return newProblem(KindContractViolation, ErrContractViolation, err.Error())
	}
}

// topic returns the topic of row, from the cache when it can.
func (r *Router) topic(row *binlog.OutboxRow) (string, *problem) {
	t := r.tmpl
	if t.constant != "" {
		return t.constant, nil
	}
	// The cache key: the value of a template's only placeholder (the
	// default {event_type}) as it is, with nothing to build; otherwise
	// every value used, length-prefixed.
	var key []byte
	if len(t.fields) == 1 {
		if b, s := t.fields[0].value(row); b != nil {
			key = b
		} else {
			r.keyBuf = append(r.keyBuf[:0], s...)
			key = r.keyBuf
		}
	} else {
		r.keyBuf = t.cacheKey(r.keyBuf[:0], row)
		key = r.keyBuf
	}
	if topic, ok := r.topics[string(key)]; ok {
		return topic, nil
	}
	var p *problem
	r.topicBuf, p = t.expand(r.topicBuf[:0], row)
	if p != nil {
		// Only an illegal topic can have grown the scratch buffers past a
		// few hundred bytes; do not keep a huge row value's worth of memory.
		if cap(r.keyBuf) > 4*maxTopicLen || cap(r.topicBuf) > 4*maxTopicLen {
			r.keyBuf, r.topicBuf = nil, nil
		}
		return "", p
	}
	if len(r.topics) >= maxCacheEntries {
		clear(r.topics)
	}
	topic := string(r.topicBuf)
	r.topics[string(key)] = topic
	return topic, nil
}

func rowError(row *binlog.OutboxRow, txn *binlog.Txn, p *problem) *RowError {
	return &RowError{
		Table:   row.Database + "." + row.Table,
		GTID:    txn.GTID,
		EventID: string(row.EventID),
		Kind:    p.kind,
		Err:     p,
	}
}

func nullOrEmpty(b []byte) string {
	if b == nil {
		return "NULL"
	}
	return "empty"
}

// isUUID reports whether b is a UUID in canonical form: 36 characters,
// hex digits of either case, hyphens at offsets 8, 13, 18 and 23. Version
// and variant are not checked.
func isUUID(b []byte) bool {
	if len(b) != 36 || b[8] != '-' || b[13] != '-' || b[18] != '-' || b[23] != '-' {
		return false
	}
	for i, c := range b {
		if jsonscan.HexValue[c] < 0 && i != 8 && i != 13 && i != 18 && i != 23 {
			return false
		}
	}
	return true
}
