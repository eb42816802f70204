package devenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadProperties(t *testing.T) {
	path := filepath.Join(t.TempDir(), "worker.properties")
	text := "# comment\n! also a comment\n\n" +
		"bootstrap.servers=kafka-1:9092,kafka-2:9092\n" +
		"  group.id = outbox\n" +
		"listeners: http://0.0.0.0:8083\n" +
		"plugin.path /opt/plugins\n" +
		"long=one,\\\n    two\n" +
		"path=C:\\\\dir\\tx\n" +
		"key\\=with\\:seps=v\n" +
		"empty=\n"
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	got, err := ReadProperties(path)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"bootstrap.servers": "kafka-1:9092,kafka-2:9092",
		"group.id":          "outbox",
		"listeners":         "http://0.0.0.0:8083",
		"plugin.path":       "/opt/plugins",
		"long":              "one,two",
		"path":              "C:\\dir\tx",
		"key=with:seps":     "v",
		"empty":             "",
	}, got)

	// What escapeProperty writes reads back the same.
	vals := map[string]string{"a": `C:\x`, "b": " leading", "c": "multi\nline"}
	var out string
	for k, v := range vals {
		out += k + "=" + escapeProperty(v) + "\n"
	}
	require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
	got, err = ReadProperties(path)
	require.NoError(t, err)
	assert.Equal(t, vals, got)
}

func TestReadRepositoryWorkerProperties(t *testing.T) {
	got, err := ReadProperties("../../examples/debezium/connect-distributed.properties")
	require.NoError(t, err)
	assert.Equal(t, "debezium-outbox", got["group.id"])
	assert.Equal(t, "connect-offsets", got["offset.storage.topic"])
	assert.Equal(t, "org.apache.kafka.connect.storage.StringConverter", got["value.converter"])
}
