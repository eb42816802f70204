package config

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// defaultCompression is the default of --compression: snappy costs the
// router little CPU and spares the brokers about half the bytes of JSON
// payloads; zstd compresses better for more CPU.
const defaultCompression = "snappy"

// compressionCodecs are the values of --compression.
var compressionCodecs = map[string]kgo.CompressionCodec{
	"none":   kgo.NoCompression(),
	"snappy": kgo.SnappyCompression(),
	"lz4":    kgo.Lz4Compression(),
	"zstd":   kgo.ZstdCompression(),
	"gzip":   kgo.GzipCompression(),
}

// compression returns the producer codec of --compression (empty is none).
func (c *Config) compression() (kgo.CompressionCodec, error) {
	name := strings.ToLower(strings.TrimSpace(c.Compression))
	if name == "" {
		name = "none"
	}
	codec, ok := compressionCodecs[name]
	if !ok {
		return kgo.NoCompression(), fmt.Errorf("--compression %q: use none, snappy, lz4, zstd or gzip", c.Compression)
	}
	return codec, nil
}
