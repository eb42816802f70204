package harness

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDecodeRequest decodes requests framed as franz-go frames them, with
// header v1 (Produce v7) and v2 (Produce v9, EndTxn v3), with and without
// a client id, as the proxy's traps see them.
func TestDecodeRequest(t *testing.T) {
	id := "binlog-router-x#2"
	for _, clientID := range []string{"", "binlog-router"} {
		for _, v := range []int16{7, 9, 11} {
			p := kmsg.NewPtrProduceRequest()
			p.SetVersion(v)
			p.TransactionID = &id
			p.Acks = -1
			got := decode(t, clientID, p).(*kmsg.ProduceRequest)
			if got.TransactionID == nil || *got.TransactionID != id || got.Acks != -1 {
				t.Errorf("produce v%d, client id %q: decoded %+v", v, clientID, got)
			}
		}
		e := kmsg.NewPtrEndTxnRequest()
		e.SetVersion(3)
		e.TransactionalID, e.ProducerEpoch, e.Commit = id, 7, true
		got := decode(t, clientID, e).(*kmsg.EndTxnRequest)
		if got.TransactionalID != id || got.ProducerEpoch != 7 || !got.Commit {
			t.Errorf("end txn, client id %q: decoded %+v", clientID, got)
		}
	}
	if _, err := decodeRequest([]byte{0, 0, 0, 10, 0, 0, 0, 9, 0, 0, 0, 1, 0, 99}); err == nil {
		t.Error("a client id longer than the frame decoded")
	}
}

func decode(t *testing.T, clientID string, req kmsg.Request) kmsg.Request {
	t.Helper()
	var opts []kmsg.RequestFormatterOpt
	if clientID != "" {
		opts = append(opts, kmsg.FormatterClientID(clientID))
	}
	frame := kmsg.NewRequestFormatter(opts...).AppendRequest(nil, req, 42)
	got, err := decodeRequest(frame)
	if err != nil {
		t.Fatalf("%T v%d: %v", req, req.GetVersion(), err)
	}
	if got.Key() != req.Key() || got.GetVersion() != req.GetVersion() {
		t.Fatalf("decoded key %d v%d, want %d v%d", got.Key(), got.GetVersion(), req.Key(), req.GetVersion())
	}
	return got
}
