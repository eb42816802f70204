package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestCompression(t *testing.T) {
	codecs := func(c Config) []kgo.CompressionCodec {
		cl, err := kgo.NewClient(c.KafkaOpts()...)
		require.NoError(t, err)
		defer cl.Close()
		v, _ := cl.OptValue(kgo.ProducerBatchCompression).([]kgo.CompressionCodec)
		return v
	}
	c := validRun()
	require.NoError(t, c.Validate())
	assert.Equal(t, []kgo.CompressionCodec{kgo.SnappyCompression()}, codecs(c), "default: snappy")

	c.Compression = "none"
	require.NoError(t, c.Validate())
	assert.Equal(t, []kgo.CompressionCodec{kgo.NoCompression()}, codecs(c))

	c.Compression = "ZSTD"
	require.NoError(t, c.Validate())
	assert.Equal(t, []kgo.CompressionCodec{kgo.ZstdCompression()}, codecs(c))

	c.Compression = "brotli"
	err := c.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `--compression "brotli": use none, snappy, lz4, zstd or gzip`)
}
