// Package config is the router's one configuration struct, filled from
// command-line flags and BINLOG_ROUTER_* environment variables (flag wins),
// validated once, and turned into each component's own config.
//
// Every flag --some-name is also read from BINLOG_ROUTER_SOME_NAME, so
// secrets such as BINLOG_ROUTER_MYSQL_PASSWORD never need to be on the
// command line; *-file flags read a secret from a file.
package config
