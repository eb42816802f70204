import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Properties;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * HangingMarker runs one transaction of Apache Kafka's own Java producer in
 * two steps, so that the caller can act on the cluster in between: it
 * initialises the transactional id, begins a transaction and sends one
 * record (key "k", the given value) to partition 0 of the topic, waiting for
 * its acknowledgement, then prints "sent OFFSET" and waits for a line on
 * stdin; then it commits the transaction and prints "committed MS" (how long
 * commitTransaction took) or "failed MS EXCEPTION". Every line goes to
 * stdout; the exit status is 0 in both cases.
 *
 * Usage: java HangingMarker BOOTSTRAP TOPIC TRANSACTIONAL_ID VALUE
 */
public final class HangingMarker {
    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: HangingMarker BOOTSTRAP TOPIC TRANSACTIONAL_ID VALUE");
            System.exit(2);
        }
        Properties p = new Properties();
        p.put("bootstrap.servers", args[0]);
        p.put("transactional.id", args[2]);
        p.put("transaction.timeout.ms", "60000");
        p.put("max.block.ms", "60000");
        p.put("key.serializer", ByteArraySerializer.class.getName());
        p.put("value.serializer", ByteArraySerializer.class.getName());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            producer.beginTransaction();
            RecordMetadata md = producer.send(new ProducerRecord<>(args[1], 0,
                    "k".getBytes(StandardCharsets.UTF_8), args[3].getBytes(StandardCharsets.UTF_8))).get();
            System.out.println("sent " + md.offset());
            System.out.flush();
            in.readLine();
            long began = System.nanoTime();
            try {
                producer.commitTransaction();
                System.out.println("committed " + (System.nanoTime() - began) / 1_000_000);
            } catch (Exception e) {
                System.out.println("failed " + (System.nanoTime() - began) / 1_000_000 + " " + e);
            }
            System.out.flush();
            producer.close(Duration.ofSeconds(5));
        }
    }
}
