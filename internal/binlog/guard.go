package binlog

// TableGuard is shown what the stream sees of tables that are not outbox
// tables, so that a mistake in the configured table names stops the
// reader before the checkpoint can move over rows it should have
// routed. Calls come from the reading goroutine, in binlog order, and
// must not block; an error stops the reader (it is not retried) before
// the transaction that holds the event is handed over.
type TableGuard interface {
	// Rows is called for each rows event of a table that is not an
	// outbox table.
	Rows(database, table string) error
	// DDL is called for each statement that is not BEGIN or COMMIT, with
	// the default database it ran in.
	DDL(database, query string) error
}
