package route

import "github.com/twmb/franz-go/pkg/kgo"

// kafkaHasher places a key like the Java client's default partitioner:
// toPositive(murmur2(key)) % numPartitions, toPositive(x) = x & 0x7fffffff.
var kafkaHasher = kgo.KafkaHasher(Murmur2)

// Partitioner returns the partitioner records from Record must be produced
// with: every record has a key, so each goes to PartitionFor(key, n), the
// partition the Java client's default partitioner picks. Consumers and
// other producers of the same topics therefore agree on where an aggregate
// lives, and one aggregate's events stay in order on one partition.
func Partitioner() kgo.Partitioner {
	return kgo.StickyKeyPartitioner(kafkaHasher)
}

// PartitionFor returns the partition a record with key goes to in a topic of
// numPartitions partitions. numPartitions must be positive; like integer
// division by zero, PartitionFor panics otherwise.
func PartitionFor(key []byte, numPartitions int) int {
	return kafkaHasher(key, numPartitions)
}
