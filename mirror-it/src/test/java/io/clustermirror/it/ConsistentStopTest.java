package io.clustermirror.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.DescribeClusterMirrorsOptions;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.MirrorTopicsOptions;
import io.clustermirror.admin.MirrorTopicsResult;
import io.clustermirror.admin.SplitTransaction;
import io.clustermirror.admin.StopTransactions;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A committed transaction of the source over two topics, which the destination holds committed on one and open on the
 * other (that topic's fetching was held back, paused, after the transaction's records and before its commit marker):
 * the dry-run names it, a plain stop leaves it half visible to {@code read_committed} consumers, and a consistent stop
 * removes it from both and reports exactly the records it cut beyond a plain stop. The same with the default
 * {@code read_committed} fetch and the other topic held back before any of the transaction's records: only the source's
 * transaction log, which the mirror keeps, shows the split.
 */
@MirrorClusterTest(source = "consistent-source", destination = "consistent-destination")
class ConsistentStopTest {
    private static final int RECORDS = 5;
    private static final String GROUP = "reader-of-";
    private static ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters;
    private static MirrorTestCluster source;
    private static MirrorTestCluster destination;
    private static ClusterMirrorAdmin mirrors;

    @BeforeAll
    static void nameTheClusters() {
        source = clusters.source;
        destination = clusters.destination;
        mirrors = clusters.mirrors;
    }

    /** The transaction the destination holds split: its producer, and where its records begin on the committed topic. */
    private record Split(long producerId, long firstOffsetCommitted, long firstOffsetOpen) {
    }

    /**
     * Builds the split: committed transactions over both topics, then T, whose records both topics mirror; {@code open}
     * is paused; T commits; {@code committed} mirrors T's commit marker and is paused too, so nothing changes after.
     */
    private static Split split(String mirror, String committed, String open) throws Exception {
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(committed, 1, (short) 1), new NewTopic(open, 1, (short) 1)));
        }
        Map<String, String> config = MirrorAssertions.mirrorConfig(source);
        config.put(MirrorConfig.FETCH_ISOLATION_LEVEL, "read_uncommitted"); // the open topic then holds T's records
        config.put(MirrorConfig.METADATA_REFRESH_INTERVAL_MS, "1000"); // the group's offsets reach the destination soon
        mirrors.createClusterMirror(mirror, config).all().get();
        mirrors.startMirrorTopics(mirror, List.of(committed, open), List.of()).all().get();
        TopicPartition a = new TopicPartition(committed, 0);
        TopicPartition b = new TopicPartition(open, 0);
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(source.bootstrapServers(),
                Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, mirror + "-t"))) {
            producer.initTransactions();
            for (int t = 0; t < 2; t++) {
                producer.beginTransaction();
                Workloads.sendBatch(producer, committed, 0, "before" + t, 2);
                Workloads.sendBatch(producer, open, 0, "before" + t, 2);
                producer.commitTransaction();
            }
            producer.beginTransaction();
            long firstA = Workloads.sendBatch(producer, committed, 0, "T", RECORDS).get(0).offset();
            long firstB = Workloads.sendBatch(producer, open, 0, "T", RECORDS).get(0).offset();
            awaitMirrored(a, b);
            mirrors.pauseMirrorTopics(mirror, List.of(open), List.of()).all().get();
            MirrorAssertions.awaitState(mirrors, mirror, open, 1, PartitionState.PAUSED);
            producer.commitTransaction();
            awaitMirrored(a);
            awaitGroupSynced(a);
            mirrors.pauseMirrorTopics(mirror, List.of(committed), List.of()).all().get();
            MirrorAssertions.awaitState(mirrors, mirror, committed, 1, PartitionState.PAUSED);
            long producerId = MirrorAssertions.producerIds(source, a).iterator().next();
            return new Split(producerId, firstA, firstB);
        }
    }

    /**
     * A group on the source that read {@code tp} to its end, past T: waits until the sync has copied its offset, which
     * lies past a consistent cut below T.
     */
    private static void awaitGroupSynced(TopicPartition tp) throws Exception {
        try (Admin sourceAdmin = source.admin(); Admin destinationAdmin = destination.admin()) {
            long end = MirrorAssertions.endOffset(sourceAdmin, tp);
            sourceAdmin.alterConsumerGroupOffsets(GROUP + tp.topic(), Map.of(tp, new OffsetAndMetadata(end))).all().get();
            TestUtils.waitFor(() -> groupOffset(destinationAdmin, tp) == end, MirrorAssertions.TIMEOUT,
                "the sync did not copy the offset " + end + " of the group reading " + tp);
        }
    }

    private static long groupOffset(Admin admin, TopicPartition tp) throws Exception {
        OffsetAndMetadata committed = admin.listConsumerGroupOffsets(GROUP + tp.topic()).partitionsToOffsetAndMetadata().get().get(tp);
        return committed == null ? -1 : committed.offset();
    }

    /** Waits until the destination holds everything the source holds of each partition. */
    private static void awaitMirrored(TopicPartition... partitions) throws Exception {
        try (Admin sourceAdmin = source.admin(); Admin destinationAdmin = destination.admin()) {
            for (TopicPartition tp : partitions) {
                long end = MirrorAssertions.endOffset(sourceAdmin, tp);
                TestUtils.waitFor(() -> MirrorAssertions.endOffset(destinationAdmin, tp) == end, MirrorAssertions.TIMEOUT,
                    "the destination did not mirror " + tp + " up to " + end);
            }
        }
    }

    /** The values of T's records a read_committed consumer of the destination reads on a partition. */
    private static long recordsOfT(TopicPartition tp) throws Exception {
        return MirrorAssertions.readAll(destination, tp).stream().filter(r -> r.contains(" h-T=")).count();
    }

    @Test
    void theDryRunNamesTheSplitAndAPlainStopLeavesHalfOfItVisible() throws Exception {
        Split t = split("plain", "plain-a", "plain-b");
        TopicPartition a = new TopicPartition("plain-a", 0);
        TopicPartition b = new TopicPartition("plain-b", 0);

        StopTransactions preview = mirrors.previewStopMirrorTopics("plain", List.of("plain-a", "plain-b"), List.of()).transactions().get();

        assertEquals(1, preview.split().size(), preview.toString());
        SplitTransaction named = preview.split().get(0);
        assertEquals(t.producerId(), named.producerId());
        assertEquals(List.of(new SplitTransaction.Part("plain-a", 0, t.firstOffsetCommitted(), t.firstOffsetCommitted() + RECORDS - 1,
                t.firstOffsetCommitted() + RECORDS, RECORDS, 0),
            new SplitTransaction.Part("plain-b", 0, t.firstOffsetOpen(), t.firstOffsetOpen() + RECORDS - 1, -1, 0, RECORDS)), named.parts());
        assertEquals(RECORDS, preview.extraRecords());
        assertTrue(preview.sourceLogCurrent(), "the sync follows the reachable source's logs: the analysis waited until they were "
            + "read past it; " + preview);
        StopTransactions described = mirrors.describeClusterMirrors(List.of("plain"),
            new DescribeClusterMirrorsOptions().includeTransactions(true)).all().get().get("plain").transactions().orElseThrow();
        assertEquals(preview.split(), described.split(), "--describe --transactions analyses the mirror's mirroring topics alike");
        CliRun json = CliRun.run(destination.bootstrapServers(), "--describe", "--mirror", "plain", "--transactions", "--json");
        assertEquals(0, json.exit(), json.err());
        JsonNode transactions = new ObjectMapper().readTree(json.out()).get("mirrors").get(0).get("transactions");
        assertEquals(1, transactions.get("split_transactions").size(), json.out());
        assertEquals(RECORDS, transactions.get("extra_records").asLong(), json.out());

        mirrors.stopMirrorTopics("plain", List.of("plain-a", "plain-b"), List.of()).all().get();
        MirrorAssertions.awaitState(mirrors, "plain", "plain-a", 1, PartitionState.STOPPED);
        MirrorAssertions.awaitState(mirrors, "plain", "plain-b", 1, PartitionState.STOPPED);
        assertEquals(RECORDS, recordsOfT(a), "the whole of T on the topic whose commit marker was mirrored");
        assertEquals(0, recordsOfT(b), "none of T on the other: split");
    }

    @Test
    void theSourcesTransactionLogShowsASplitWhoseRecordsALaggingTopicNeverMirrored() throws Exception {
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic("logged-a", 1, (short) 1), new NewTopic("logged-b", 1, (short) 1)));
        }
        mirrors.createClusterMirror("logged", MirrorAssertions.mirrorConfig(source)).all().get(); // read_committed
        mirrors.startMirrorTopics("logged", List.of("logged-a", "logged-b"), List.of()).all().get();
        TopicPartition a = new TopicPartition("logged-a", 0);
        TopicPartition b = new TopicPartition("logged-b", 0);
        long firstA;
        long endA;
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(source.bootstrapServers(),
                Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "logged-t"))) {
            producer.initTransactions();
            producer.beginTransaction();
            Workloads.sendBatch(producer, "logged-a", 0, "before", 2);
            Workloads.sendBatch(producer, "logged-b", 0, "before", 2);
            producer.commitTransaction();
            awaitMirrored(a, b);
            mirrors.pauseMirrorTopics("logged", List.of("logged-b"), List.of()).all().get();
            MirrorAssertions.awaitState(mirrors, "logged", "logged-b", 1, PartitionState.PAUSED);
            producer.beginTransaction();
            firstA = Workloads.sendBatch(producer, "logged-a", 0, "T", RECORDS).get(0).offset();
            Workloads.sendBatch(producer, "logged-b", 0, "T", RECORDS);
            producer.commitTransaction();
            awaitMirrored(a);
            mirrors.pauseMirrorTopics("logged", List.of("logged-a"), List.of()).all().get();
            MirrorAssertions.awaitState(mirrors, "logged", "logged-a", 1, PartitionState.PAUSED);
        }
        try (Admin admin = destination.admin()) {
            endA = MirrorAssertions.endOffset(admin, a);
        }
        long producerId = MirrorAssertions.producerIds(source, a).iterator().next();
        List<SplitTransaction> named = new java.util.ArrayList<>();
        TestUtils.waitFor(() -> {
            named.clear();
            named.addAll(mirrors.previewStopMirrorTopics("logged", List.of("logged-a", "logged-b"), List.of()).transactions().get().split());
            return !named.isEmpty();
        }, MirrorAssertions.TIMEOUT, "the dry-run never named the split transaction (the sync keeps the source's transaction log)");

        assertEquals(producerId, named.get(0).producerId());
        assertEquals(List.of(new SplitTransaction.Part("logged-a", 0, firstA, firstA + RECORDS - 1, firstA + RECORDS, RECORDS, 0),
            new SplitTransaction.Part("logged-b", 0, -1, -1, -1, 0, 0)), named.get(0).parts(), "logged-b mirrored none of it");
        MirrorTopicsResult stop = mirrors.stopMirrorTopics("logged", List.of("logged-a", "logged-b"), List.of(),
            new MirrorTopicsOptions().consistent(true));
        StopTransactions cut = stop.consistentCut().get();
        assertEquals(RECORDS, cut.extraRecords());
        assertEquals(new StopTransactions.ConsistentCut("logged-a", 0, firstA, endA, RECORDS), cut.cuts().get(0));
        assertTrue(cut.sourceLogCurrent(), "the source's logs were read past the analysis: " + cut);
        MirrorAssertions.awaitState(mirrors, "logged", "logged-a", 1, PartitionState.STOPPED);
        MirrorAssertions.awaitState(mirrors, "logged", "logged-b", 1, PartitionState.STOPPED);
        assertEquals(0, recordsOfT(a), "T is visible on neither topic");
        assertEquals(0, recordsOfT(b));
    }

    /**
     * A planned stop is consistent by construction: it stops only once no transaction is open on any selected partition
     * and each holds all the source holds, so every transaction is whole on every partition.
     */
    @Test
    void aPlannedStopKeepsEveryTransactionWholeAcrossTopics() throws Exception {
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic("planned-a", 1, (short) 1), new NewTopic("planned-b", 1, (short) 1)));
        }
        mirrors.createClusterMirror("planned", MirrorAssertions.mirrorConfig(source)).all().get();
        mirrors.startMirrorTopics("planned", List.of("planned-a", "planned-b"), List.of()).all().get();
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(source.bootstrapServers(),
                Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "planned-t"))) {
            producer.initTransactions();
            producer.beginTransaction();
            Workloads.sendBatch(producer, "planned-a", 0, "T", RECORDS);
            Workloads.sendBatch(producer, "planned-b", 0, "T", RECORDS);
            producer.commitTransaction();
        }
        Properties sourceClient = new Properties();
        sourceClient.put("bootstrap.servers", source.bootstrapServers());
        mirrors.stopMirrorTopics("planned", List.of("planned-a", "planned-b"), List.of(),
            new MirrorTopicsOptions().planned(true).sourceClientConfigs(sourceClient).timeoutMs(60_000)).all().get();
        MirrorAssertions.awaitState(mirrors, "planned", "planned-a", 1, PartitionState.STOPPED);
        MirrorAssertions.awaitState(mirrors, "planned", "planned-b", 1, PartitionState.STOPPED);
        assertEquals(RECORDS, recordsOfT(new TopicPartition("planned-a", 0)), "the whole transaction on both topics");
        assertEquals(RECORDS, recordsOfT(new TopicPartition("planned-b", 0)));
    }

    @Test
    void aConsistentStopRemovesTheSplitTransactionEverywhereAndReportsTheExtraCut() throws Exception {
        Split t = split("consistent", "consistent-a", "consistent-b");
        TopicPartition a = new TopicPartition("consistent-a", 0);
        TopicPartition b = new TopicPartition("consistent-b", 0);
        long before;
        try (Admin admin = destination.admin()) {
            before = MirrorAssertions.endOffset(admin, a);
        }

        MirrorTopicsResult stop = mirrors.stopMirrorTopics("consistent", List.of("consistent-a", "consistent-b"), List.of(),
            new MirrorTopicsOptions().consistent(true));

        assertEquals(List.of("consistent-a", "consistent-b"), stop.topics().get());
        StopTransactions cut = stop.consistentCut().get();
        assertEquals(RECORDS, cut.extraRecords(), "T's records on consistent-a, and nothing more");
        assertEquals(List.of(new StopTransactions.ConsistentCut("consistent-a", 0, t.firstOffsetCommitted(), before, RECORDS),
            new StopTransactions.ConsistentCut("consistent-b", 0, t.firstOffsetOpen(), t.firstOffsetOpen(), 0)), cut.cuts());
        MirrorAssertions.awaitState(mirrors, "consistent", "consistent-a", 1, PartitionState.STOPPED);
        MirrorAssertions.awaitState(mirrors, "consistent", "consistent-b", 1, PartitionState.STOPPED);
        assertEquals(0, recordsOfT(a), "T is gone from both");
        assertEquals(0, recordsOfT(b));
        assertEquals(4, MirrorAssertions.readAll(destination, a).size(), "the transactions before T stay");
        try (Admin admin = destination.admin()) {
            assertEquals(t.firstOffsetCommitted(), groupOffset(admin, a), "the synced group's offset past the cut is moved back to it");
        }
        MirrorPartitionDescription stopped = MirrorAssertions.describe(mirrors, "consistent", "consistent-a", 0);
        assertEquals(t.firstOffsetCommitted(), stopped.barrierOffset(), "the barrier at the consistent cut");
        assertEquals(t.firstOffsetCommitted(), stopped.truncatedFromOffset());
        assertEquals(before, stopped.truncatedToOffset());
        try (KafkaProducer<byte[], byte[]> local = Workloads.producer(destination.bootstrapServers(), Map.of())) {
            assertEquals(stopped.barrierOffset() + 1, local.send(new ProducerRecord<>("consistent-a", 0, null, Workloads.bytes("local")))
                .get().offset(), "the topic is writable after the barrier");
        }
    }

    /**
     * A read-process-write application commits its input offsets inside its transactions. T1 reads the input's records 0 to 4
     * and writes their results to two output topics; T2 reads 5 to 9. One output topic's fetching is held back before T2,
     * the metadata sync copies T2's offset 10. A consistent stop removes T2's output from both topics and gives the group
     * T1's offset, 5: resumed on the destination, the application writes T2's results again, each exactly once.
     */
    @Test
    void aConsistentStopGivesATransactionalGroupTheOffsetOfTheLastTransactionItKeeps() throws Exception {
        String in = "rpw-in";
        List<String> outs = List.of("rpw-out-a", "rpw-out-b");
        TopicPartition input = new TopicPartition(in, 0);
        try (Admin admin = source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(in, 1, (short) 1), new NewTopic(outs.get(0), 1, (short) 1),
                new NewTopic(outs.get(1), 1, (short) 1)));
        }
        Map<String, String> config = MirrorAssertions.mirrorConfig(source);
        config.put(MirrorConfig.METADATA_REFRESH_INTERVAL_MS, "1000");
        mirrors.createClusterMirror("rpw", config).all().get();
        mirrors.startMirrorTopics("rpw", List.of(in, outs.get(0), outs.get(1)), List.of()).all().get();
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(source.bootstrapServers(), Map.of())) {
            for (int i = 0; i < 10; i++) {
                producer.send(new ProducerRecord<>(in, 0, null, Workloads.bytes("input-" + i))).get();
            }
        }
        TopicPartition outA = new TopicPartition(outs.get(0), 0);
        TopicPartition outB = new TopicPartition(outs.get(1), 0);
        try (ReadProcessWrite app = new ReadProcessWrite(source.bootstrapServers(), "rpw-app", in, outs)) {
            app.step(5);
            awaitMirrored(input, outA, outB);
            mirrors.pauseMirrorTopics("rpw", List.of(outs.get(1)), List.of()).all().get();
            MirrorAssertions.awaitState(mirrors, "rpw", outs.get(1), 1, PartitionState.PAUSED);
            app.step(5);
        }
        awaitMirrored(outA);
        try (Admin destinationAdmin = destination.admin()) {
            TestUtils.waitFor(() -> groupOffset(destinationAdmin, "rpw-app", input) == 10, MirrorAssertions.TIMEOUT,
                "the sync did not copy T2's offset 10");
        }
        TestUtils.waitFor(() -> mirrors.previewStopMirrorTopics("rpw", List.of(in, outs.get(0), outs.get(1)), List.of()).transactions().get()
                .groupOffsets().equals(List.of(new StopTransactions.GroupOffset("rpw-app", in, 0, 5, 1))), MirrorAssertions.TIMEOUT,
            "the dry-run never showed the group's offset at T1's (the sync keeps the source's transactional commits)");

        MirrorTopicsResult stop = mirrors.stopMirrorTopics("rpw", List.of(in, outs.get(0), outs.get(1)), List.of(),
            new MirrorTopicsOptions().consistent(true));
        assertEquals(List.of(new StopTransactions.GroupOffset("rpw-app", in, 0, 5, 1)), stop.consistentCut().get().groupOffsets());
        for (String topic : List.of(in, outs.get(0), outs.get(1))) {
            MirrorAssertions.awaitState(mirrors, "rpw", topic, 1, PartitionState.STOPPED);
        }
        try (Admin destinationAdmin = destination.admin()) {
            assertEquals(5, groupOffset(destinationAdmin, "rpw-app", input), "T1's offset: T2's output was cut");
        }
        try (ReadProcessWrite resumed = new ReadProcessWrite(destination.bootstrapServers(), "rpw-app", in, outs)) {
            resumed.step(5);
        }
        for (TopicPartition out : List.of(outA, outB)) {
            List<String> results = MirrorAssertions.readAll(destination, out).stream().map(r -> r.split(" ")[2]).toList();
            assertEquals(java.util.stream.IntStream.range(0, 10).mapToObj(i -> "result-of-" + i).toList(), results,
                "each input's result exactly once on " + out);
        }
    }

    private static long groupOffset(Admin admin, String group, TopicPartition tp) throws Exception {
        OffsetAndMetadata committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().get(tp);
        return committed == null ? -1 : committed.offset();
    }

    /**
     * A read-process-write loop: each step reads the next records of the input's partition 0 and, in one transaction,
     * writes one result per record to each output topic and commits the input offset.
     */
    static final class ReadProcessWrite implements AutoCloseable {
        private final KafkaConsumer<byte[], byte[]> consumer;
        private final KafkaProducer<byte[], byte[]> producer;
        private final List<String> outs;

        ReadProcessWrite(String bootstrapServers, String group, String in, List<String> outs) {
            this.consumer = Workloads.transactionalAppConsumer(bootstrapServers, group);
            this.consumer.assign(List.of(new TopicPartition(in, 0)));
            this.producer = Workloads.producer(bootstrapServers, Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, group + "-t"));
            this.producer.initTransactions();
            this.outs = outs;
        }

        /** Reads {@code records} input records and processes them in one transaction. */
        void step(int records) throws Exception {
            List<ConsumerRecord<byte[], byte[]>> read = new java.util.ArrayList<>();
            TestUtils.waitFor(() -> {
                consumer.poll(Duration.ofMillis(100)).forEach(read::add);
                return read.size() >= records;
            }, MirrorAssertions.TIMEOUT, "the input did not hold " + records + " more records");
            List<ConsumerRecord<byte[], byte[]>> batch = read.subList(0, records);
            consumer.seek(new TopicPartition(batch.get(0).topic(), 0), batch.get(records - 1).offset() + 1);
            producer.beginTransaction();
            for (ConsumerRecord<byte[], byte[]> r : batch) {
                for (String out : outs) {
                    producer.send(new ProducerRecord<>(out, 0, null, Workloads.bytes("result-of-" + r.offset())));
                }
            }
            producer.sendOffsetsToTransaction(Map.of(new TopicPartition(batch.get(0).topic(), 0),
                new OffsetAndMetadata(batch.get(records - 1).offset() + 1)), consumer.groupMetadata());
            producer.commitTransaction();
        }

        @Override
        public void close() {
            producer.close();
            consumer.close();
        }
    }
}
