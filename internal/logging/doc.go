// Package logging builds the process's zerolog logger and bridges the
// loggers of dependencies into it: go-mysql logs through log/slog and
// franz-go through its kgo.Logger interface. Every log line of the process
// therefore has one format (JSON or console) and one level setting.
//
// Nothing here logs secrets; callers must not pass passwords as fields.
package logging
