// Package contract owns the payload contracts: one JSON Schema per event
// type, and per schema_version where that column is mapped, read from a
// directory and compiled once at start (Load), then checked against each
// payload before it is produced (Set.Check).
//
// Promises:
//   - Load compiles every contract of the directory or fails: a schema
//     that is not JSON, not a valid schema, or whose $ref does not resolve
//     is an error naming its file. Nothing is fetched over the network: a
//     $ref may name another file (relative to the schema's own), not a
//     URL of another scheme.
//   - A loaded Set is read-only: Check is safe for concurrent use.
//   - Check is a pure function of (event type, schema version, payload):
//     the same row always gives the same verdict, so a row that fails
//     fails again when retried or replayed.
//   - The library checks the payload as its own jsonschema.UnmarshalJSON
//     would decode it; this package decodes it, in one pass and with
//     fewer allocations, into the same document (FuzzDecode holds it to
//     that), and CheckStrict also answers whether it is JSON in UTF-8,
//     so that the router reads a payload with a contract only once.
//
// A file of the directory's top level named <event_type>.json is the
// contract of every payload of that event type; <event_type>.v<N>.json
// (N decimal digits) the contract of the rows whose schema_version is N.
// A row with a schema_version takes its versioned contract if there is
// one, else the unversioned one. Files in subdirectories are not
// contracts; they are there for $ref. This package knows nothing of
// Kafka or the binlog; it is the only user of the JSON Schema library.
package contract
