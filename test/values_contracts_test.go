package test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/test/harness"
)

// orderContract is the contract of the OrderCreated events of
// TestPayloadContracts; its amount is defined in another file.
const orderContract = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["orderId", "amount"],
  "properties": {"orderId": {"type": "string"}, "amount": {"$ref": "defs/money.json"}}
}`

// TestPayloadContracts: with --contracts-dir, a broken contract refuses
// to start (exit 2, naming the file); validate lists the contracts and
// the event types without one; a payload that satisfies its contract is
// routed; one that violates it stops the router (exit 1) with an error
// naming the schema file, instance path, keyword, GTID and event_id,
// and the checkpoint stays before it; restarted with
// --on-invalid=dead-letter, the row goes to the dead-letter topic and
// the next row is routed.
func TestPayloadContracts(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	dir := t.TempDir()
	contractFile := filepath.Join(dir, "OrderCreated.json")
	write := func(name, content string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	write("OrderCreated.json", orderContract)

	// The $ref names a file that is not there yet: no start.
	bad := harness.StartRouter(t, e.Args("contracts", "--contracts-dir", dir)...)
	assert.Equal(t, 2, bad.Wait(30*time.Second), "a contract whose $ref does not resolve refuses to start")
	assert.Contains(t, bad.Out.String(), "contract "+contractFile+" does not compile")
	write("defs/money.json", `{"type": "number", "minimum": 0}`)

	e.InsertTx(harness.NewEvent("p1", "OrderPaid", `{}`))
	v := harness.StartCommand(t, "validate", e.Args("contracts", "--contracts-dir", dir)...)
	v.Wait(30 * time.Second)
	assert.Contains(t, v.Out.String(), "OK   contracts: 1 compiled from "+dir+" (--contracts-missing=allow): OrderCreated.json")
	assert.Contains(t, v.Out.String(), "WARN contracts of shop.outbox: event types of its last 10000 rows without a contract in "+dir+": OrderPaid")

	r := harness.StartRouter(t, e.Args("contracts", "--contracts-dir", dir)...)
	good := harness.NewEvent("o1", "OrderCreated", `{"orderId":"o1","amount":12.5}`)
	e.InsertTx(good)
	goodPos := e.GTIDPos()
	e.WaitCheckpoint("contracts", goodPos)
	violating := harness.NewEvent("o2", "OrderCreated", `{"orderId":"o2","amount":"12.50"}`)
	e.InsertTx(violating)
	badGTID := e.GTIDPos()
	after := harness.NewEvent("o3", "OrderCreated", `{"orderId":"o3","amount":3}`)
	e.InsertTx(after)
	assert.Equal(t, 1, r.Wait(60*time.Second), "a contract violation stops the router")
	log := r.Out.String()
	var printed string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "payload violates contract") {
			var entry struct{ Error string }
			require.NoError(t, json.Unmarshal([]byte(line), &entry), line)
			printed = entry.Error
		}
	}
	t.Logf("violation as printed: %s", printed)
	for _, s := range []string{"shop.outbox", "event_id=" + violating.ID, "gtid=" + badGTID,
		"contract " + contractFile, `instance path "/amount"`, `keyword "type"`, "--on-invalid=dead-letter"} {
		assert.Contains(t, printed, s)
	}
	assert.Equal(t, goodPos, e.CheckpointSet("contracts"), "the checkpoint stays before the violating row %s", badGTID)
	c := harness.NewConsumer(t, e.Kafka.Brokers, harness.ExactTopic(e.Prefix+".OrderCreated"))
	seen := harness.RecordIDs(c.Quiet(time.Second))
	assert.Equal(t, []string{good.ID}, seen, "the valid row, and nothing from the violating row on")

	dlq := e.Prefix + ".dlq"
	r2 := harness.StartRouter(t, e.Args("contracts", "--contracts-dir", dir, "--on-invalid", "dead-letter", "--dead-letter-topic", dlq)...)
	got := c.ReadIDsUntil(func(ids []string) bool { return len(seen)+len(ids) >= 2 }, 30*time.Second)
	assert.ElementsMatch(t, []string{good.ID, after.ID}, append(seen, got...), "the valid rows, once each")
	letters := harness.NewConsumer(t, e.Kafka.Brokers, harness.ExactTopic(dlq)).Read(1, 30*time.Second)
	require.Len(t, letters, 1)
	id, _ := harness.Header(letters[0], "id")
	kind, _ := harness.Header(letters[0], "error_kind")
	assert.Equal(t, violating.ID, id)
	assert.Equal(t, "contract_violation", kind)
	require.Equal(t, 0, r2.Stop(20*time.Second))
}
