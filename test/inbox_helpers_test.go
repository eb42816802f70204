package test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/binlog-router/binlog-router/internal/inboxtest"
)

// unique names a topic, group or consumer for one test.
var unique = inboxtest.Unique

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// endOffsets are topic's end offsets by partition.
func endOffsets(t *testing.T, brokers []string, topic string) map[int32]int64 {
	t.Helper()
	adm := newAdmin(t, brokers)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lo, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	lo.Each(func(o kadm.ListedOffset) {
		if o.Err == nil {
			out[o.Partition] = o.Offset
		}
	})
	return out
}
