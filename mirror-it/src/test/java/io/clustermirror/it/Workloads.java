package io.clustermirror.it;

import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.AbortTransactionSpec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Queue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Writes the mix of batches the identity tests need: every producer kind and codec, headers, nulls. */
final class Workloads {
    static final String[] CODECS = {"none", "gzip", "snappy", "lz4", "zstd"};

    private Workloads() {
    }

    static KafkaProducer<byte[], byte[]> producer(String bootstrap, Map<String, Object> overrides) {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60_000);
        props.putAll(overrides);
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    }

    /**
     * The consumer of a read-process-write application: in {@code group}, reading committed records only, committing
     * nothing itself (its offsets go in its transactions), from the start of a partition the group has no offset for.
     */
    static KafkaConsumer<byte[], byte[]> transactionalAppConsumer(String bootstrap, String group) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    static byte[] bytes(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    /** A record with a header; every seventh has a null key and every eleventh a null value. */
    static ProducerRecord<byte[], byte[]> record(String topic, int partition, String tag, int i) {
        RecordHeaders headers = new RecordHeaders();
        headers.add("h-" + tag, bytes("v" + i));
        String key = i % 7 == 0 ? null : "k-" + tag + "-" + i;
        String value = i % 11 == 0 ? null : "value-" + tag + "-" + i;
        return new ProducerRecord<>(topic, partition, null, bytes(key), bytes(value), headers);
    }

    /**
     * For each codec: plain (non-idempotent) batches, idempotent batches, and transactions that commit and
     * abort interleaved, across every partition of the topic.
     */
    static void writeAllKinds(String bootstrap, String topic, int partitions, int perBatch) throws ExecutionException, InterruptedException {
        for (String codec : CODECS) {
            try (KafkaProducer<byte[], byte[]> plain = producer(bootstrap, Map.of(
                    ProducerConfig.COMPRESSION_TYPE_CONFIG, codec, ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false, ProducerConfig.ACKS_CONFIG, "1"));
                 KafkaProducer<byte[], byte[]> idempotent = producer(bootstrap, Map.of(
                    ProducerConfig.COMPRESSION_TYPE_CONFIG, codec, ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true));
                 KafkaProducer<byte[], byte[]> transactional = producer(bootstrap, Map.of(
                    ProducerConfig.COMPRESSION_TYPE_CONFIG, codec, ProducerConfig.TRANSACTIONAL_ID_CONFIG, "tx-" + topic + "-" + codec))) {
                transactional.initTransactions();
                for (int p = 0; p < partitions; p++) {
                    sendBatch(plain, topic, p, "plain-" + codec, perBatch);
                    sendBatch(idempotent, topic, p, "idem-" + codec, perBatch);
                    transactional.beginTransaction();
                    sendBatch(transactional, topic, p, "committed-" + codec, perBatch);
                    transactional.commitTransaction();
                    transactional.beginTransaction();
                    sendBatch(transactional, topic, p, "aborted-" + codec, perBatch);
                    transactional.abortTransaction();
                    sendBatch(idempotent, topic, p, "idem2-" + codec, perBatch);
                }
            }
        }
    }

    /** A record written by {@link #sendBatch} and acknowledged: its tag, its index in the batch and its offset. */
    record Acked(String tag, int index, long offset) {
        /** How {@link MirrorAssertions#readAll} shows this record's header (unique per tag and index). */
        String headerMark() {
            return " h-" + tag + "=v" + index + " ";
        }
    }

    /** Creates a topic of {@code partitions} partitions at replication factor 1 on the cluster, with {@code configs}. */
    static void createTopic(MirrorTestCluster cluster, String topic, int partitions, Map<String, String> configs) throws Exception {
        try (Admin admin = cluster.admin()) {
            createTopics(admin, List.of(new NewTopic(topic, partitions, (short) 1).configs(configs)));
        }
    }

    /**
     * Creates the topics and waits until the cluster serves every partition of them. The controller answers once the topics
     * are in its log, but a broker serves them only once its own metadata has them: a producer sending at once is told it
     * is no leader (and an idempotent one can then retry out of order for its whole delivery timeout), and a mirror started
     * at once is told the topics do not exist.
     */
    static void createTopics(Admin admin, Collection<NewTopic> topics) throws Exception {
        admin.createTopics(topics).all().get(60, TimeUnit.SECONDS);
        List<String> names = topics.stream().map(NewTopic::name).toList();
        TestUtils.waitFor(() -> admin.describeTopics(names).allTopicNames().get().values().stream()
                .flatMap(description -> description.partitions().stream())
                .allMatch(partition -> partition.leader() != null && !partition.leader().isEmpty()),
            Duration.ofSeconds(60), "every partition of " + names + " served by a leader");
    }

    /** Sends {@code count} records of {@link #record} to partition 0 of the topic with a new idempotent producer. */
    static void sendIdempotent(String bootstrap, String topic, String tag, int count) throws ExecutionException, InterruptedException {
        try (KafkaProducer<byte[], byte[]> producer = producer(bootstrap, Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true))) {
            sendBatch(producer, topic, 0, tag, count);
        }
    }

    /** Sends {@code count} records of {@link #record} and waits for all of them; returns their acknowledgements. */
    static List<Acked> sendBatch(KafkaProducer<byte[], byte[]> producer, String topic, int partition, String tag, int count)
            throws ExecutionException, InterruptedException {
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            sent.add(producer.send(record(topic, partition, tag, i)));
        }
        producer.flush();
        List<Acked> acked = new ArrayList<>();
        for (int i = 0; i < sent.size(); i++) {
            acked.add(new Acked(tag, i, sent.get(i).get().offset()));
        }
        return acked;
    }

    /**
     * Five records of a new idempotent producer ({@code tag-idem}), then five of a new transactional one in a committed
     * transaction ({@code tag-tx}, transactional id {@code tx-tag}) to partition 0; returns them once committed.
     */
    static List<Acked> writeIdempotentAndTransactional(String bootstrap, String topic, String tag) throws Exception {
        List<Acked> acked = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> idempotent = producer(bootstrap, Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true));
             KafkaProducer<byte[], byte[]> transactional = producer(bootstrap, Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "tx-" + tag))) {
            acked.addAll(sendBatch(idempotent, topic, 0, tag + "-idem", 5));
            transactional.initTransactions();
            transactional.beginTransaction();
            List<Acked> tx = sendBatch(transactional, topic, 0, tag + "-tx", 5);
            transactional.commitTransaction();
            acked.addAll(tx);
        }
        return acked;
    }

    /**
     * Writes a small batch to partition 0 with each of {@code idempotent} new idempotent producers and {@code transactional}
     * new transactional ones (committed). Producer ids come in blocks per broker, from 0 on a fresh cluster, so many
     * producers on a fresh multi-broker source use the low ids of each block that another cluster's brokers hand out:
     * the way collisions between mirrored and local producer ids are arranged.
     */
    static void writeWithManyProducers(String bootstrap, String topic, int idempotent, int transactional)
            throws ExecutionException, InterruptedException {
        for (int i = 0; i < idempotent; i++) {
            try (KafkaProducer<byte[], byte[]> p = producer(bootstrap, Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true))) {
                sendBatch(p, topic, 0, "idem" + i, 2);
            }
        }
        for (int i = 0; i < transactional; i++) {
            try (KafkaProducer<byte[], byte[]> p = producer(bootstrap, Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, topic + "-tx-" + i))) {
                p.initTransactions();
                p.beginTransaction();
                sendBatch(p, topic, 0, "tx" + i, 2);
                p.commitTransaction();
            }
        }
    }

    /** {@code perPartition} records of one new idempotent producer to every partition of the topic, acknowledged. */
    static void writeToEveryPartition(String bootstrap, String topic, int partitions, String tag, int perPartition)
            throws ExecutionException, InterruptedException {
        try (KafkaProducer<byte[], byte[]> idempotent = producer(bootstrap, Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true))) {
            for (int p = 0; p < partitions; p++) {
                sendBatch(idempotent, topic, p, tag, perPartition);
            }
        }
    }

    /**
     * A write to a mirror partition that the read-only rule cannot refuse: opens a transaction on the source (the
     * destination mirrors up to its start, the source's last stable offset), then a destination client aborts that
     * transaction with {@code Admin.abortTransaction} (WriteTxnMarkers, authorized on the cluster only), which appends
     * an abort marker at the offset where the source holds the transaction's records; then the transaction commits on
     * the source. Returns the marker's offset.
     */
    static long writeForeignAbortMarker(TestCluster source, TestCluster destination, TopicPartition tp, String transactionalId)
            throws Exception {
        try (KafkaProducer<byte[], byte[]> transactional = producer(source.bootstrapServers(),
                 Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId));
             Admin sourceAdmin = source.admin();
             Admin destinationAdmin = destination.admin()) {
            transactional.initTransactions();
            transactional.beginTransaction();
            long openAt = sendBatch(transactional, tp.topic(), tp.partition(), "open-" + transactionalId, 3).get(0).offset();
            // Mirroring stops at the source's last stable offset: the start of the open transaction.
            TestUtils.waitFor(() -> MirrorAssertions.committedEnd(sourceAdmin, tp) == openAt
                    && MirrorAssertions.endOffset(destinationAdmin, tp) == openAt,
                MirrorAssertions.TIMEOUT, "the destination to mirror " + tp + " up to the open transaction at " + openAt);

            LogBatches.Batch openBatch = LogBatches.read(source.partitionDir(source.leaderOf(tp), tp), openAt, Long.MAX_VALUE)
                .stream().filter(b -> b.baseOffset() == openAt).findFirst().orElseThrow();
            destinationAdmin.abortTransaction(new AbortTransactionSpec(tp, openBatch.producerId(), openBatch.producerEpoch(), 0)).all().get();
            assertEquals(openAt + 1, MirrorAssertions.endOffset(destinationAdmin, tp),
                "the abort marker landed at " + openAt + ", where the source holds the transaction's records");

            transactional.commitTransaction();
            return openAt;
        }
    }

    /**
     * Sends numbered records ({@code topic-i}) round-robin over the partitions with an idempotent acks=all producer
     * until {@code done}, at a steady client's rate; each value goes to {@code acked} or, with its error, {@code failed}.
     */
    static void writeUntilDone(String bootstrap, String topic, int partitions, AtomicBoolean done, Queue<String> acked,
                               Queue<String> failed) {
        try (KafkaProducer<byte[], byte[]> producer = producer(bootstrap,
                 Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.ACKS_CONFIG, "all"))) {
            for (int i = 0; !done.get(); i++) {
                String value = topic + "-" + i;
                producer.send(new ProducerRecord<>(topic, i % partitions, null, bytes(value)), (metadata, error) -> {
                    if (error == null) {
                        acked.add(value);
                    } else {
                        failed.add(value + ": " + error);
                    }
                });
                if (i % 5 == 4) {
                    producer.flush();
                    pace();
                }
            }
            producer.flush();
        }
    }

    /** A steady client's rate (about 250 records a second), not a synchronisation. */
    private static void pace() {
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
