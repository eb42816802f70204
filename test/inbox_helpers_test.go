package test

import (
	"encoding/json"

	"github.com/binlog-router/binlog-router/internal/inboxtest"
)

// unique names a topic, group or consumer for one test.
var unique = inboxtest.Unique

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
