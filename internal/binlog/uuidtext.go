package binlog

// UUIDText formats the 16 bytes of a binary event id as a canonical UUID
// in the byte order order, as the reader does for a binary event id
// column: for readers of the outbox table that must hand over the values
// the binlog reader does.
func UUIDText(b []byte, order UUIDBinary) []byte { return uuidText(b, order) }
