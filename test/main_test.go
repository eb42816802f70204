package test

import (
	"os"
	"testing"

	"github.com/binlog-router/binlog-router/test/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
