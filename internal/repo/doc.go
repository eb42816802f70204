// Package repo holds no code: its tests enforce rules about the repository
// itself. The import rules of DESIGN.md are checked over every non-test Go
// file: imports go down the layers (TestImportsGoDown) and each external
// library has its owners (TestImportRules); Kafka clients are made only in
// internal/kafka (TestKafkaClientsInOnePackage). No tracked file may exceed
// 1 MiB (binaries and data sets do not belong in the repository).
package repo
