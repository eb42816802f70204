// Package binlog is the protocol side of the router and the router's only
// package that imports go-mysql (the benchmark program test/bench also
// does, to measure go-mysql alone as a baseline). It connects to MySQL or
// MariaDB as a replica, reads the row-based binlog from a GTID position and
// turns it into the router's own values: OutboxRow (one INSERTed outbox
// row, decoded by column name), Txn (a transaction's GTID and commit time)
// and Batch (what the Reader hands over through a Queue). A Queue's writer
// side (AddRow, EndTxn, Heartbeat, Close) and NewTxn serve other sources
// too, such as the relay's tests; the contract below binds them as well.
//
// Contract:
//   - Transactions are the unit. A transaction's GTID reaches a Batch's
//     Done list only after all its outbox rows were queued, so a GTID set
//     built from Done never covers a row that was not handed over.
//   - Only INSERTs of the configured outbox tables are decoded; other
//     tables' row events are skipped without decoding their rows. DELETEs
//     of outbox rows are ignored; UPDATEs are reported (Observer) or fatal
//     (UpdateFail).
//   - Column names come from TABLE_MAP metadata when the server logs them
//     (binlog_row_metadata=FULL). Otherwise a row is decoded only with the
//     column layout in force when it was written: the layout is given by
//     Reader.SetLayouts (a checkpoint's, Txn.Layouts) or read from
//     information_schema and trusted only where a scan of the binlog up to
//     the read finds no DDL on the table; every DDL statement met is applied
//     to it with a MySQL parser; each TABLE_MAP's column count and types are
//     checked against it. A row whose layout is not known for certain, or
//     that cannot be mapped, is a *EventError wrapping ErrUnmappable, before
//     the row: never skipped, never guessed.
//   - Values are what SELECT prints for them: mapped text converted to
//     UTF-8 from its character set (or checked to be UTF-8), BINARY(n)
//     padded back to n bytes, a 16-byte binary event id as UUID text
//     (Config.UUIDBinary), an UNSIGNED integer as unsigned, MySQL's
//     binary JSON as its SELECT text, a DATETIME created_at read in
//     Config.DatetimeZone or the server's time zone. Character sets and
//     signs come from the TABLE_MAP (binlog_row_metadata MINIMAL or FULL)
//     or the tracked definition; a fact neither knows, a type not
//     published or a character set not converted is a *EventError wrapping
//     ErrUnmappable before the row, naming the column.
//   - A row image without a mapped column (binlog_row_image changed at
//     runtime) is a *EventError before the row; an outbox INSERT logged as a
//     statement (binlog_format changed at runtime) is a *EventError wrapping
//     ErrStatementFormat.
//   - Lost connections are retried with backoff from the last transaction
//     handed over; a transaction cut off in the middle is read again from
//     its start and the rows already handed over are skipped. Each
//     transaction is delivered once per Reader.Run. Reader.RunResume
//     starts inside a transaction, from a checkpoint taken there: the
//     given number of its outbox rows are skipped when the server sends
//     it.
//   - A transaction whose GTID the reader's set already contains (the
//     set Run started from plus every transaction handed over since) is
//     never handed over, whatever the server sends: a source that
//     ignores the requested position and streams from its first binlog
//     publishes nothing twice. Each run of such transactions is logged
//     once and counted (Observer.Replayed); a run longer than
//     MaxReplayedRun on one connection is a *PositionIgnoredError
//     (ErrPositionIgnored, ErrServerConfig). A Resume's transaction is
//     not in the set and is read as before.
//   - XA: the rows of a prepared XA transaction are handed over at its
//     XA COMMIT, as rows of the committing transaction, read again from the
//     prepare group in the binlog (never kept in memory); XA ROLLBACK hands
//     nothing over. The prepare group itself is a transaction without rows.
//     Txn.XA carries the table of prepared transactions after each XA
//     group; a checkpoint stores it and Reader.SetPrepared gives it back. A
//     commit whose prepare group is unknown or purged is an *XAError
//     naming the XID (ErrXAUnknown, ErrBinlogPurged): never skipped.
//   - A purged start position is a *PurgedError (ErrBinlogPurged); denied
//     credentials or privileges are ErrAccessDenied. Both are final.
//   - Reader.FirstTxn describes, event by event (kind, position, outbox
//     INSERT or not, row count), the first transaction a replica starting
//     after a GTID set is sent, over a short-lived connection of its own:
//     what converting a Debezium offset, which counts events, needs.
//   - Memory is bounded by the go-mysql event cache (Config.EventCache)
//     and the Queue's row and byte limits, never by the size of a
//     transaction or of the backlog. Row bytes alias the binlog packets.
package binlog
