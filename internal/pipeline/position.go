package pipeline

import (
	"time"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// position is where the loop stands in the binlog: what the stored
// checkpoint covers, what a checkpoint written now would cover, and the
// binlog transaction whose rows are being produced.
type position struct {
	// committed is the GTID set the stored checkpoint covers; pending
	// also covers transactions handed to Kafka since.
	committed, pending *gtid.Set
	binlogPos          binlog.Position            // the binlog position after the last pending transaction
	sourceTime         time.Time                  // source commit time of the last pending transaction
	layouts            map[string]schema.TableDef // outbox table definitions after the last pending transaction
	xa                 []binlog.PreparedXA        // XA transactions prepared within pending
	partial            bool                       // inside a binlog transaction (not at a boundary)
	// open is the binlog transaction whose rows are being produced and
	// openRows how many of its outbox rows were produced (counting those
	// of earlier sessions when resumed inside it): the position a
	// checkpoint inside it records. openGTID survives a resume, where the
	// Txn value is new.
	open     *binlog.Txn
	openGTID string
	openRows int
	// skip: the open transaction's rows are read past (a pass left it
	// out of its range).
	skip bool
}

// commitPoint is what the next commit makes durable: the records of the
// open Kafka transaction and the binlog transactions they complete.
type commitPoint struct {
	records int       // records since the last commit point
	since   time.Time // when the first of them was produced (the Kafka transaction began)
	txns    int       // binlog transactions completed since the last commit point
	last    time.Time // when the last commit point was made
}
