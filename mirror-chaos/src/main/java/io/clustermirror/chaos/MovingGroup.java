package io.clustermirror.chaos;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The consumer group {@value #GROUP} of a run: it reads the failover topic on the source (read_committed), commits
 * after every poll that returned records, and moves to the destination at the failover, where it must resume at its
 * last synced commit ({@link HistoryChecker#checkGroupMove}).
 */
final class MovingGroup {
    static final String GROUP = "chaos-group";

    /** An offset the group committed (or tried to: a failed commit may still have been written), at a time of the run. */
    record Commit(TopicPartition partition, long offset, long atMs) {
    }

    private final String bootstrapServers;
    private final String topic;
    private final History history;
    private final List<Commit> commits = new CopyOnWriteArrayList<>();
    private final Thread thread;
    private volatile boolean stopping;

    MovingGroup(String sourceBootstrapServers, String topic, History history) {
        this.bootstrapServers = sourceBootstrapServers;
        this.topic = topic;
        this.history = history;
        this.thread = new Thread(this::consumeOnTheSource, "workload-group");
    }

    void start() {
        thread.start();
    }

    private static Properties consumerProperties(String bootstrapServers) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        return props;
    }

    private void consumeOnTheSource() {
        Properties props = consumerProperties(bootstrapServers);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        while (!stopping) {
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                consumer.subscribe(List.of(topic));
                while (!stopping) {
                    ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                    for (TopicPartition tp : records.partitions()) {
                        List<?> polled = records.records(tp);
                        offsets.put(tp, new OffsetAndMetadata(records.records(tp).get(polled.size() - 1).offset() + 1));
                    }
                    if (!offsets.isEmpty()) {
                        long now = history.nowMs();
                        offsets.forEach((tp, o) -> commits.add(new Commit(tp, o.offset(), now)));
                        consumer.commitSync(offsets);
                    }
                }
            } catch (RuntimeException e) {
                history.event("workload", "group " + GROUP + " failed on the source, starting a new consumer: " + e);
            }
        }
    }

    /** Stops consuming on the source (the operator's step before moving the group); returns every commit it made. */
    List<Commit> stop() throws InterruptedException {
        stopping = true;
        thread.join(TimeUnit.MINUTES.toMillis(2));
        return List.copyOf(commits);
    }

    /**
     * Starts a member of the group on the destination and returns the offset of the first record it reads on each
     * partition of the topic, from the committed offsets (no reset policy: a partition without one fails). Nothing is
     * committed.
     */
    static Map<TopicPartition, Long> resumeOn(String destinationBootstrapServers, String topic, int partitions) throws Exception {
        Properties props = consumerProperties(destinationBootstrapServers);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
        Map<TopicPartition, Long> first = new HashMap<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (first.size() < partitions) {
                if (System.nanoTime() > deadline) {
                    throw new TimeoutException("group " + GROUP + " read nothing of some partitions of " + topic + " on the destination "
                        + "within 60 s (first offsets read: " + first + ")");
                }
                consumer.poll(Duration.ofMillis(200)).forEach(r -> first.putIfAbsent(new TopicPartition(r.topic(), r.partition()), r.offset()));
            }
        }
        return first;
    }

    /** The offset of the first committed record at or after {@code offset}, read by a consumer of no group. */
    static long firstRecordFrom(String bootstrapServers, TopicPartition tp, long offset) throws TimeoutException {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.assign(List.of(tp));
            consumer.seek(tp, offset);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (System.nanoTime() < deadline) {
                for (var r : consumer.poll(Duration.ofMillis(200))) {
                    return r.offset();
                }
            }
        }
        throw new TimeoutException("no record of " + tp + " at or after offset " + offset + " within 60 s");
    }
}
