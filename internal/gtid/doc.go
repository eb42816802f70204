// Package gtid owns GTID sets in the two flavours binlog-router reads:
// MySQL's sets of executed transactions and MariaDB's replication positions.
// It is the checkpoint's vocabulary: "published up to" is a *Set, saved as
// its String and loaded with Parse.
//
// What it promises:
//
//   - Parse accepts the server-native text of its flavour (what
//     @@gtid_executed, @@gtid_binlog_pos and friends print, including
//     MySQL's ",\n" between uuids) and String prints one canonical form, so
//     Parse(f, s.String()) is Equal to s and prints the same string again.
//     Two sets of one flavour are Equal exactly when their Strings are.
//   - MySQL: a Set is the set of transactions (uuid, tag, gno). String sorts
//     by uuid (lower-case hex), prints the untagged intervals first and then
//     each tag in order, as MySQL 8.4 does: "uuid:1-5:7:tag1:1-3".
//     Contains is ⊇ and Subtract is set difference.
//   - MariaDB: a Set is a position, the last GTID domain-server-seq of each
//     replication domain; AddMariaDB replaces the domain's entry. Contains
//     and Subtract compare sequence numbers per domain, ignoring server ids.
//     String sorts by domain: "0-1-42,1-2-7".
//   - AddMySQL of the next transaction of a uuid/tag, AddMariaDB of a known
//     domain and the Append functions do not allocate, so they can run once
//     per binlog transaction.
//   - Parse and Add report malformed text as an error wrapping ErrSyntax
//     that names the offending piece; nothing in this package does I/O.
//
// A Set is not safe for concurrent use if any goroutine mutates it;
// concurrent reads are fine. Clone a set before handing it to another
// goroutine that outlives the next Add.
package gtid
