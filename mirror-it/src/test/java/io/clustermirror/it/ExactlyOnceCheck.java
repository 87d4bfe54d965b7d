package io.clustermirror.it;

import io.clustermirror.testsupport.TestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The exactly-once checks of a failed-over pipeline on what the destination holds, read {@code read_committed}: every
 * input record has exactly one effect, none is lost or counted twice, and no effect comes from an input the destination
 * does not hold. Each check returns a {@link Report} that counts the violations per kind and names the first records of
 * each.
 */
final class ExactlyOnceCheck {
    /** How many records of each kind of violation a report names. */
    private static final int EXAMPLES = 10;

    private ExactlyOnceCheck() {
    }

    /** The violations of one kind: how many, and the first few records that show them. */
    static final class Kind {
        private final String name;
        private long count;
        private final List<String> examples = new ArrayList<>();

        Kind(String name) {
            this.name = name;
        }

        void add(long n, String example) {
            count += n;
            if (examples.size() < EXAMPLES) {
                examples.add(example);
            }
        }
    }

    /** What a check found: the sizes it checked, and the violations by kind. */
    static final class Report {
        private final String sizes;
        private final Map<String, Kind> kinds = new LinkedHashMap<>();

        Report(String sizes, String... kinds) {
            this.sizes = sizes;
            for (String kind : kinds) {
                this.kinds.put(kind, new Kind(kind));
            }
        }

        Kind kind(String name) {
            return kinds.get(name);
        }

        boolean clean() {
            return kinds.values().stream().allMatch(k -> k.count == 0);
        }

        /** One line: the sizes, then each kind's count. */
        String summary() {
            return sizes + " " + kinds.values().stream().map(k -> k.name + "=" + k.count).collect(Collectors.joining(" "));
        }

        /** The summary, then the first records of each kind found. */
        String details() {
            StringBuilder out = new StringBuilder(summary());
            for (Kind k : kinds.values()) {
                if (k.count > 0) {
                    out.append("\n  ").append(k.name).append(" (first ").append(k.examples.size()).append("): ").append(String.join("; ", k.examples));
                }
            }
            return out.toString();
        }
    }

    /**
     * The read-process-write loop ({@link ReadProcessWriteLoop}): each input record has exactly one result. Kinds:
     * {@code duplicates} (input records with more than one result), {@code losses} (with none), {@code phantoms}
     * (results that name an input record the destination does not hold, or hold with another value).
     */
    static Report readProcessWrite(List<ConsumerRecord<byte[], byte[]>> inputs, List<ConsumerRecord<byte[], byte[]>> results) {
        Map<String, String> named = new LinkedHashMap<>();
        for (ConsumerRecord<byte[], byte[]> r : inputs) {
            named.put(ReadProcessWriteLoop.result(r.partition(), r.offset(), str(r.value())), r.partition() + "@" + r.offset());
        }
        Map<String, List<String>> resultsOf = new HashMap<>();
        Report report = new Report("inputs=" + inputs.size() + " results=" + results.size(), "duplicates", "losses", "phantoms");
        for (ConsumerRecord<byte[], byte[]> r : results) {
            String value = str(r.value());
            if (named.containsKey(value)) {
                resultsOf.computeIfAbsent(value, v -> new ArrayList<>()).add(r.partition() + "@" + r.offset());
            } else {
                report.kind("phantoms").add(1, "out " + r.partition() + "@" + r.offset() + " = " + value);
            }
        }
        for (Map.Entry<String, String> input : named.entrySet()) {
            List<String> at = resultsOf.getOrDefault(input.getKey(), List.of());
            if (at.isEmpty()) {
                report.kind("losses").add(1, "in " + input.getValue() + " has no result");
            } else if (at.size() > 1) {
                report.kind("duplicates").add(1, "in " + input.getValue() + " has " + at.size() + " results at out " + at);
            }
        }
        return report;
    }

    /**
     * The counting application ({@link CountingStreamsApp}): per key, the outputs in order are exactly 1, 2, ..., n, n
     * the key's records in the input, and the changelog's last value is n. Kinds: {@code repeats} (outputs of a count
     * not above the key's highest before: the state went back), {@code gaps} (outputs that skip counts),
     * {@code phantoms} (per key, by how much the state the stop kept exceeds n: it counts input records the destination
     * does not hold), {@code overcounts} (by how much the highest count exceeds both n and the kept state: input records
     * counted twice), {@code undercounts} (by how much it falls short of n: input records never counted),
     * {@code wrongStates} (keys whose changelog's last count is not n).
     *
     * @param kept the count per key of the changelog right after the stop, before the application resumed
     */
    static Report counts(List<ConsumerRecord<byte[], byte[]>> inputs, Map<String, Long> kept, List<ConsumerRecord<byte[], byte[]>> outputs,
                         List<ConsumerRecord<byte[], byte[]>> changelog) {
        Map<String, Long> expected = new TreeMap<>();
        inputs.forEach(r -> expected.merge(str(r.key()), 1L, Long::sum));
        Map<String, Long> highest = new HashMap<>();
        Report report = new Report("inputs=" + inputs.size() + " keys=" + expected.size() + " outputs=" + outputs.size(),
            "repeats", "gaps", "phantoms", "overcounts", "undercounts", "wrongStates");
        for (ConsumerRecord<byte[], byte[]> r : outputs) {
            String key = str(r.key());
            long count = Long.parseLong(str(r.value()));
            long before = highest.getOrDefault(key, 0L);
            if (count <= before) {
                report.kind("repeats").add(1, key + " count " + count + " at out " + r.partition() + "@" + r.offset() + " after " + before);
            } else if (count > before + 1) {
                report.kind("gaps").add(1, key + " count " + count + " at out " + r.partition() + "@" + r.offset() + " after " + before);
            }
            highest.put(key, Math.max(before, count));
        }
        Map<String, Long> state = lastCounts(changelog);
        for (Map.Entry<String, Long> e : expected.entrySet()) {
            String key = e.getKey();
            long n = e.getValue();
            long keptCount = kept.getOrDefault(key, 0L);
            long high = highest.getOrDefault(key, 0L);
            if (keptCount > n) {
                report.kind("phantoms").add(keptCount - n, key + " kept a count of " + keptCount + " for " + n + " records");
            }
            if (high > Math.max(n, keptCount)) {
                report.kind("overcounts").add(high - Math.max(n, keptCount), key + " counted to " + high + " of " + n + " records from a kept "
                    + keptCount);
            } else if (high < n) {
                report.kind("undercounts").add(n - high, key + " counted to " + high + " of " + n + " records from a kept " + keptCount);
            }
            long last = state.getOrDefault(key, 0L);
            if (last != n) {
                report.kind("wrongStates").add(1, key + " stored " + last + " for " + n + " records");
            }
        }
        return report;
    }

    /** The last count per key of the changelog: the store's final state. */
    static Map<String, Long> lastCounts(List<ConsumerRecord<byte[], byte[]>> changelog) {
        Map<String, Long> last = new TreeMap<>();
        for (ConsumerRecord<byte[], byte[]> r : changelog) {
            // A count is a Long; read the last 8 bytes, should the value carry a timestamp before it.
            byte[] v = r.value();
            last.put(str(r.key()), v == null ? 0L : ByteBuffer.wrap(v, v.length - Long.BYTES, Long.BYTES).getLong());
        }
        return last;
    }

    /**
     * Per input partition, the offset after the last input record whose result the outputs hold: where the group's
     * offset must be for the application to go on exactly once (the offset the last kept transaction committed).
     */
    static Map<TopicPartition, Long> offsetsOfResults(String input, List<ConsumerRecord<byte[], byte[]>> results) {
        Map<TopicPartition, Long> offsets = new TreeMap<>(ExactlyOnceCheck::compare);
        for (ConsumerRecord<byte[], byte[]> r : results) {
            String[] name = str(r.value()).split(":", 2)[0].split("-");
            offsets.merge(new TopicPartition(input, Integer.parseInt(name[1])), Long.parseLong(name[2]) + 1, Math::max);
        }
        return offsets;
    }

    /**
     * Per input partition, the offset up to which the counts in {@code state} hold exactly the partition's records (every
     * key counted as often as it occurs before it), or -1 where no prefix of the partition matches: where the group's
     * offset must be for the application to go on exactly once.
     */
    static Map<TopicPartition, Long> offsetsOfState(List<ConsumerRecord<byte[], byte[]>> inputs, Map<String, Long> state) {
        Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> byPartition = new TreeMap<>(ExactlyOnceCheck::compare);
        inputs.forEach(r -> byPartition.computeIfAbsent(new TopicPartition(r.topic(), r.partition()), tp -> new ArrayList<>()).add(r));
        Map<TopicPartition, Long> offsets = new TreeMap<>(ExactlyOnceCheck::compare);
        for (Map.Entry<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> e : byPartition.entrySet()) {
            Map<String, Long> wanted = new HashMap<>();
            e.getValue().forEach(r -> wanted.put(str(r.key()), state.getOrDefault(str(r.key()), 0L)));
            Map<String, Long> seen = new HashMap<>();
            long matched = -1;
            for (int i = 0; i <= e.getValue().size() && matched < 0; i++) {
                if (wanted.entrySet().stream().allMatch(w -> seen.getOrDefault(w.getKey(), 0L).equals(w.getValue()))) {
                    matched = i < e.getValue().size() ? e.getValue().get(i).offset() : e.getValue().get(i - 1).offset() + 1;
                } else if (i < e.getValue().size()) {
                    seen.merge(str(e.getValue().get(i).key()), 1L, Long::sum);
                }
            }
            offsets.put(e.getKey(), matched);
        }
        return offsets;
    }

    /** The committed offsets of a group on a cluster, by partition. */
    static Map<TopicPartition, Long> groupOffsets(TestCluster cluster, String group) throws Exception {
        try (Admin admin = cluster.admin()) {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            Map<TopicPartition, Long> offsets = new TreeMap<>(ExactlyOnceCheck::compare);
            committed.forEach((tp, o) -> {
                if (o != null) {
                    offsets.put(tp, o.offset());
                }
            });
            return offsets;
        }
    }

    /** Every committed record of the topic's partitions, partition by partition, each in offset order. */
    static List<ConsumerRecord<byte[], byte[]>> readCommitted(TestCluster cluster, String topic, int partitions) throws Exception {
        List<TopicPartition> tps = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            tps.add(new TopicPartition(topic, p));
        }
        Map<TopicPartition, Long> ends = new HashMap<>();
        try (Admin admin = cluster.admin()) {
            for (TopicPartition tp : tps) {
                ends.put(tp, MirrorAssertions.endOffset(admin, tp));
            }
        }
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> read = new LinkedHashMap<>();
        tps.forEach(tp -> read.put(tp, new ArrayList<>()));
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            long deadline = System.currentTimeMillis() + MirrorAssertions.TIMEOUT.toMillis();
            while (tps.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
                if (System.currentTimeMillis() > deadline) {
                    throw new AssertionError("could not read " + topic + " to " + ends + " on " + cluster.name());
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    read.get(new TopicPartition(r.topic(), r.partition())).add(r);
                }
            }
        }
        return read.values().stream().flatMap(List::stream).toList();
    }

    private static int compare(TopicPartition a, TopicPartition b) {
        int byTopic = a.topic().compareTo(b.topic());
        return byTopic != 0 ? byTopic : Integer.compare(a.partition(), b.partition());
    }

    static String str(byte[] b) {
        return b == null ? "null" : new String(b, StandardCharsets.UTF_8);
    }
}
