package metrics

// StreamObserver is the method set of binlog.Observer, declared here so
// that this package does not depend on the binlog reader.
type StreamObserver interface {
	OutboxUpdate(table, gtid string, rows int)
	DDL(gtid, query string)
}

// Tee is a binlog.Observer that counts in Metrics and then passes each
// call on to another observer, such as one that logs.
type Tee struct {
	m    *Metrics
	next StreamObserver
}

// Tee returns an observer that counts in m, then calls next (if not nil).
func (m *Metrics) Tee(next StreamObserver) *Tee { return &Tee{m: m, next: next} }

// OutboxUpdate counts, then passes the call on.
func (t *Tee) OutboxUpdate(table, gtid string, rows int) {
	t.m.OutboxUpdate(table, gtid, rows)
	if t.next != nil {
		t.next.OutboxUpdate(table, gtid, rows)
	}
}

// DDL counts, then passes the call on.
func (t *Tee) DDL(gtid, query string) {
	t.m.DDL(gtid, query)
	if t.next != nil {
		t.next.DDL(gtid, query)
	}
}

// Reconnect counts, then passes the call on if next has a Reconnect method.
func (t *Tee) Reconnect() {
	t.m.Reconnect()
	if r, ok := t.next.(interface{ Reconnect() }); ok {
		r.Reconnect()
	}
}

// Replayed counts, then passes the call on if next has a Replayed method.
func (t *Tee) Replayed(gtid string) {
	t.m.Replayed(gtid)
	if r, ok := t.next.(interface{ Replayed(string) }); ok {
		r.Replayed(gtid)
	}
}
