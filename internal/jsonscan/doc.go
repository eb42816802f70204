// Package jsonscan checks and scans JSON text. Valid is the check that a
// payload is one JSON value in UTF-8, which the binlog reader runs as it
// decodes a row (binlog.Config.CheckPayloadJSON) and the route runs on
// rows the reader did not check. PlainEnd is the string scan that Valid
// and the contracts' decoder (contract's decode) share. It knows nothing
// else; every function is pure and safe for concurrent use.
package jsonscan
