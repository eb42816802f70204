import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.utils.Utils;

/**
 * RefPartitioner prints, for each base64 key read from standard input (one a
 * line), the partition Apache Kafka's Java producer picks for it by default
 * (BuiltInPartitioner.partitionForKey, toPositive(murmur2(key)) % n) for
 * each partition count given as an argument, and the raw murmur2 hash:
 * "HASH P1 P2 ..." per line.
 *
 * Usage: java RefPartitioner N1 N2 ... < keys
 */
public final class RefPartitioner {
    public static void main(String[] args) throws Exception {
        int[] counts = new int[args.length];
        for (int i = 0; i < args.length; i++) {
            counts[i] = Integer.parseInt(args[i]);
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.US_ASCII), 1 << 16);
        Base64.Decoder dec = Base64.getDecoder();
        for (String line; (line = in.readLine()) != null;) {
            byte[] key = dec.decode(line);
            out.write(Integer.toString(Utils.murmur2(key)));
            for (int n : counts) {
                out.write(' ');
                out.write(Integer.toString(BuiltInPartitioner.partitionForKey(key, n)));
            }
            out.write('\n');
        }
        out.flush();
    }
}
