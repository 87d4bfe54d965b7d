package io.clustermirror.chaos;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The consumer group {@value #GROUP} of a run: it reads the failover topic (read_committed) on the cluster where that
 * topic is writable, commits after every poll that returned records, and moves with the producers at each stop, where
 * it must resume at its last synced commit ({@link HistoryChecker#groupMoveViolations}).
 */
final class MovingGroup {
    static final String GROUP = "chaos-group";

    /**
     * An offset the group committed (or tried to: a failed commit may still have been written) on a cluster, at a time
     * of the run.
     */
    record Commit(Workload.Side side, TopicPartition partition, long offset, long atMs) {
    }

    private final String topic;
    private final History history;
    private final List<Commit> commits = new CopyOnWriteArrayList<>();
    private final Map<TopicPartition, Long> firstRead = new ConcurrentHashMap<>();
    private volatile Thread thread;
    private volatile boolean stopping;

    MovingGroup(String topic, History history) {
        this.topic = topic;
        this.history = history;
    }

    /**
     * Starts a member on {@code side} (at {@code bootstrapServers}): it resumes from the group's committed offsets there
     * (from the earliest record where it has none).
     */
    void start(Workload.Side side, String bootstrapServers) {
        stopping = false;
        firstRead.clear();
        thread = new Thread(() -> consume(side, bootstrapServers), "workload-group-" + side.label());
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

    private void consume(Workload.Side side, String bootstrapServers) {
        Properties props = consumerProperties(bootstrapServers);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        while (!stopping) {
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                consumer.subscribe(List.of(topic));
                while (!stopping) {
                    ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                    for (TopicPartition tp : records.partitions()) {
                        List<ConsumerRecord<byte[], byte[]>> polled = records.records(tp);
                        firstRead.putIfAbsent(tp, polled.get(0).offset());
                        offsets.put(tp, new OffsetAndMetadata(polled.get(polled.size() - 1).offset() + 1));
                    }
                    if (!offsets.isEmpty()) {
                        long now = history.nowMs();
                        offsets.forEach((tp, o) -> commits.add(new Commit(side, tp, o.offset(), now)));
                        consumer.commitSync(offsets);
                    }
                }
            } catch (RuntimeException e) {
                history.event("workload", "group " + GROUP + " failed on the " + side.label() + ", starting a new consumer: " + e);
            }
        }
    }

    /** Stops the member (the operator's step before moving the group); returns every commit the group made so far. */
    List<Commit> stop() throws InterruptedException {
        stopping = true;
        if (thread != null) {
            thread.join(TimeUnit.MINUTES.toMillis(2));
        }
        return List.copyOf(commits);
    }

    /**
     * The offset of the first record the member started last read on each of the topic's {@code partitions}, waiting up
     * to 60 s for every partition.
     */
    Map<TopicPartition, Long> awaitFirstRead(int partitions) throws InterruptedException, TimeoutException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (firstRead.size() < partitions) {
            if (System.nanoTime() > deadline) {
                throw new TimeoutException("group " + GROUP + " read nothing of some partitions of " + topic + " within 60 s after "
                    + "it moved (first offsets read: " + firstRead + ")");
            }
            Thread.sleep(100);
        }
        return Map.copyOf(firstRead);
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
