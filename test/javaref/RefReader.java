import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Pattern;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * RefReader reads every partition of the topics whose names match a regular
 * expression from the beginning to its end with Apache Kafka's own Java
 * consumer in read_committed isolation (the end being the last stable
 * offset at start), and prints each record as one JSON line: topic,
 * partition, offset, timestamp (ms), key, value and headers, bytes in
 * base64 (null for a null key, value or header value).
 *
 * Usage: java RefReader BOOTSTRAP TOPIC_REGEX TIMEOUT_MS
 */
public final class RefReader {
    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: RefReader BOOTSTRAP TOPIC_REGEX TIMEOUT_MS");
            System.exit(2);
        }
        Properties p = new Properties();
        p.put("bootstrap.servers", args[0]);
        p.put("isolation.level", "read_committed");
        p.put("enable.auto.commit", "false");
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        Pattern topics = Pattern.compile(args[1]);
        long deadline = System.currentTimeMillis() + Long.parseLong(args[2]);
        StringBuilder out = new StringBuilder();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (Map.Entry<String, List<PartitionInfo>> e : c.listTopics(Duration.ofSeconds(30)).entrySet()) {
                if (topics.matcher(e.getKey()).matches()) {
                    for (PartitionInfo pi : e.getValue()) {
                        tps.add(new TopicPartition(pi.topic(), pi.partition()));
                    }
                }
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            // Under read_committed, endOffsets is the last stable offset.
            Map<TopicPartition, Long> end = c.endOffsets(tps, Duration.ofSeconds(30));
            while (!reached(c, tps, end)) {
                if (System.currentTimeMillis() > deadline) {
                    System.err.println("RefReader: timed out before the end of " + tps);
                    System.exit(1);
                }
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    line(out, r);
                }
            }
        }
        System.out.print(out);
        System.out.flush();
    }

    private static boolean reached(KafkaConsumer<byte[], byte[]> c, List<TopicPartition> tps, Map<TopicPartition, Long> end) {
        for (TopicPartition tp : tps) {
            if (c.position(tp, Duration.ofSeconds(30)) < end.get(tp)) {
                return false;
            }
        }
        return true;
    }

    private static void line(StringBuilder b, ConsumerRecord<byte[], byte[]> r) {
        b.append("{\"topic\":\"").append(r.topic()).append("\",\"partition\":").append(r.partition())
                .append(",\"offset\":").append(r.offset()).append(",\"timestamp\":").append(r.timestamp())
                .append(",\"key\":").append(b64(r.key())).append(",\"value\":").append(b64(r.value()))
                .append(",\"headers\":[");
        boolean first = true;
        for (Header h : r.headers()) {
            if (!first) {
                b.append(',');
            }
            first = false;
            b.append('[').append(b64(h.key().getBytes(java.nio.charset.StandardCharsets.UTF_8))).append(',')
                    .append(b64(h.value())).append(']');
        }
        b.append("]}\n");
    }

    private static String b64(byte[] v) {
        return v == null ? "null" : "\"" + Base64.getEncoder().encodeToString(v) + "\"";
    }
}
