//go:build !race

package harness

// raceEnabled reports whether the suites are built with -race (Main
// builds the router the same way; RSSLimitMB allows for it).
const raceEnabled = false
