// Command binlog-router routes transactional-outbox rows from the MySQL or
// MariaDB binlog to Kafka. main stays thin: each subcommand (run, validate,
// replay, checkpoint, schema, version) parses its flags, the environment
// and an optional config file into config.Config and calls the packages
// under internal/. See docs/README.md for the commands and DESIGN.md for the
// pipeline.
package main
