package route

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Vectors from Kafka's UtilsTest.testMurmur2 (Java int results).
func TestMurmur2KafkaVectors(t *testing.T) {
	tests := []struct {
		in   []byte
		want int32
	}{
		{[]byte("21"), -973932308},
		{[]byte("foobar"), -790332482},
		{[]byte("a-little-bit-long-string"), -985981536},
		{[]byte("a-little-bit-longer-string"), -1486304829},
		{[]byte("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8"), -58897971},
		{[]byte{'a', 'b', 'c'}, 479470107},
	}
	for _, tt := range tests {
		t.Run(string(tt.in), func(t *testing.T) {
			assert.Equal(t, tt.want, int32(Murmur2(tt.in)))
		})
	}
}

func TestPartitionFor(t *testing.T) {
	tests := []struct {
		key  string
		n    int
		want int
	}{
		// murmur2("21") = -973932308 = 0xC5F1_B3EC; & 0x7fffffff =
		// 1173551340; % 10 = 0. Math.abs would give 973932308 % 10 = 8:
		// the mask, not abs, is what Kafka does.
		{"21", 10, 0},
		// murmur2("foobar") = -790332482; & 0x7fffffff = 1357151166.
		{"foobar", 10, 6},
		{"foobar", 12, 6}, // 1357151166 = 12*113095930 + 6
		// murmur2("abc") = 479470107 (positive, mask is a no-op).
		{"abc", 10, 7},
		{"abc", 6, 3}, // 479470107 = 6*79911684 + 3
		{"abc", 1, 0},
		// -1486304829 & 0x7fffffff = 661178819 = 12*55098234 + 11.
		{"a-little-bit-longer-string", 12, 11},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, PartitionFor([]byte(tt.key), tt.n), "key %q n=%d", tt.key, tt.n)
	}
}

// The kgo partitioner from Partitioner must agree with PartitionFor, and
// with franz-go's own default (which is also Kafka's murmur2).
func TestPartitionerMatchesPartitionFor(t *testing.T) {
	ours := Partitioner().ForTopic("t")
	theirs := kgo.StickyKeyPartitioner(nil).ForTopic("t")
	for _, key := range []string{"21", "foobar", "abc", "order-42", "🦄", "注文-1", "", "a-little-bit-long-string"} {
		for _, n := range []int{1, 3, 6, 10, 12, 100} {
			rec := &kgo.Record{Key: []byte(key)}
			want := PartitionFor(rec.Key, n)
			assert.True(t, ours.RequiresConsistency(rec))
			assert.Equal(t, want, ours.Partition(rec, n), "key %q n=%d", key, n)
			assert.Equal(t, want, theirs.Partition(rec, n), "key %q n=%d", key, n)
		}
	}
}

func FuzzMurmur2MatchesFranz(f *testing.F) {
	f.Add([]byte("abc"))
	f.Add([]byte{})
	theirs := kgo.StickyKeyPartitioner(nil).ForTopic("t")
	f.Fuzz(func(t *testing.T, key []byte) {
		rec := &kgo.Record{Key: key}
		if key == nil {
			rec.Key = []byte{}
		}
		if got, want := PartitionFor(rec.Key, 1<<30), theirs.Partition(rec, 1<<30); got != want {
			t.Fatalf("key %x: PartitionFor = %d, franz-go = %d", key, got, want)
		}
	})
}
