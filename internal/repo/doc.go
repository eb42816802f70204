// Package repo holds no code: its tests enforce rules about the repository
// itself. The import rules of DESIGN.md ("each external library has one
// owner") are checked over every non-test Go file, and no tracked file may
// exceed 1 MiB (binaries and data sets do not belong in the repository).
package repo
