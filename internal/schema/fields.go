package schema

// field describes one outbox field: how it is named in messages, which flag
// sets its column, its column type in the DDL, and where its name and
// ordinal live. One table drives Validate, Resolve and DDL so the three
// cannot disagree on the field list.
type field struct {
	label    string // human name used in error text
	flag     string // the flag that sets the column name
	required bool
	sqlType  string // type and attributes in the MySQL DDL
	json     bool   // a JSON column: sqlType is "JSON NULL" on MySQL, LONGTEXT with a JSON_VALID check on MariaDB
	name     func(*Columns) *string
	ordinal  func(*Layout) *int
}

// fields lists every outbox field in the order the DDL declares them.
var fields = []field{
	{
		label:    "event id",
		flag:     "--column-event-id",
		required: true,
		sqlType:  "CHAR(36) NOT NULL",
		name:     func(c *Columns) *string { return &c.EventID },
		ordinal:  func(l *Layout) *int { return &l.EventID },
	},
	{
		label:    "aggregate type",
		flag:     "--column-aggregate-type",
		required: true,
		sqlType:  "VARCHAR(255) NOT NULL",
		name:     func(c *Columns) *string { return &c.AggregateType },
		ordinal:  func(l *Layout) *int { return &l.AggregateType },
	},
	{
		label:    "aggregate id",
		flag:     "--column-aggregate-id",
		required: true,
		sqlType:  "VARCHAR(255) NOT NULL",
		name:     func(c *Columns) *string { return &c.AggregateID },
		ordinal:  func(l *Layout) *int { return &l.AggregateID },
	},
	{
		label:    "event type",
		flag:     "--column-event-type",
		required: true,
		sqlType:  "VARCHAR(255) NOT NULL",
		name:     func(c *Columns) *string { return &c.EventType },
		ordinal:  func(l *Layout) *int { return &l.EventType },
	},
	{
		label:    "payload",
		flag:     "--column-payload",
		required: true,
		sqlType:  "JSON NULL",
		json:     true,
		name:     func(c *Columns) *string { return &c.Payload },
		ordinal:  func(l *Layout) *int { return &l.Payload },
	},
	// TIMESTAMP, not DATETIME: the binlog carries a TIMESTAMP as UTC seconds
	// and microseconds, whatever the writer's session time zone. NOT NULL
	// with a default so writers need not set it.
	{
		label:   "creation time",
		flag:    "--column-created-at",
		sqlType: "TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)",
		name:    func(c *Columns) *string { return &c.CreatedAt },
		ordinal: func(l *Layout) *int { return &l.CreatedAt },
	},
	{
		label:   "schema version",
		flag:    "--column-schema-version",
		sqlType: "INT NULL",
		name:    func(c *Columns) *string { return &c.SchemaVersion },
		ordinal: func(l *Layout) *int { return &l.SchemaVersion },
	},
	// A W3C traceparent is version-traceid-parentid-flags: 2+1+32+1+16+1+2 = 55 characters.
	{
		label:   "traceparent",
		flag:    "--column-traceparent",
		sqlType: "VARCHAR(55) NULL",
		name:    func(c *Columns) *string { return &c.Traceparent },
		ordinal: func(l *Layout) *int { return &l.Traceparent },
	},
	{
		label:   "headers",
		flag:    "--column-headers",
		sqlType: "JSON NULL",
		json:    true,
		name:    func(c *Columns) *string { return &c.Headers },
		ordinal: func(l *Layout) *int { return &l.Headers },
	},
}
