package io.clustermirror.it;

import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.MirrorTopicDescription;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.records.CommandOp;
import io.clustermirror.common.records.CommandResult;
import io.clustermirror.common.records.MirrorCommand;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The command log is a topic that anyone allowed to write it can fill with anything, and the controller's only memory
 * of how far it got. A record the controller cannot apply must cost only that record; a command is applied once,
 * whatever happens to consumer groups and brokers; a START never removes what was written to a stopped topic unless
 * the operator says so; no pattern holds the controller.
 */
@MirrorClusterTest(source = "commands-source", destination = "commands-destination")
class CommandLogTest {
    private static final TopicPartition COMMANDS = new TopicPartition(InternalTopics.COMMANDS, 0);
    private static ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters;

    @Test
    void recordsTheControllerCannotApplyDoNotStopTheCommandsAfterThem() throws Exception {
        clusters.mirrors.createClusterMirror("before", MirrorAssertions.mirrorConfig(clusters.source)).all().get();
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(clusters.destination.bootstrapServers(), Map.of())) {
            List<byte[]> unusable = List.of(
                RecordCodec.encodeCommand(new MirrorCommand("no-op", null, "before", Map.of(), List.of(), List.of(), 1L)),
                RecordCodec.encodeCommand(new MirrorCommand(null, CommandOp.DELETE, "before", Map.of(), List.of(), List.of(), 1L)),
                RecordCodec.encodeCommand(new MirrorCommand("no-mirror", CommandOp.STOP, null, Map.of(), List.of("t"), List.of(), 1L)),
                Workloads.bytes("not json at all"));
            for (byte[] value : unusable) {
                producer.send(new ProducerRecord<>(InternalTopics.COMMANDS, 0, null, value)).get();
            }
        }
        clusters.mirrors.createClusterMirror("after", MirrorAssertions.mirrorConfig(clusters.source)).all().get();
        assertTrue(clusters.mirrors.listClusterMirrors().names().get().containsAll(Set.of("before", "after")),
            "the command without an id deleted nothing, and the one after the bad records was applied");
    }

    /**
     * The controller's position lives in {@code __mirror_metadata}, written with each command's outcome: deleting its
     * consumer group (the old place of its position) and restarting every destination broker replays nothing, and a
     * client that sends a command again under the same id gets the first result, not a second application. A replayed
     * START of the stopped topic would cut its local writes away.
     */
    @Test
    void noCommandIsAppliedAgainAfterTheGroupIsDeletedAndEveryBrokerRestartsOrWhenItIsSentAgain() throws Exception {
        String topic = "replayed";
        TopicPartition tp = new TopicPartition(topic, 0);
        stoppedTopicWithLocalWrites("replay", topic, 5);
        List<String> before = MirrorAssertions.readAll(clusters.destination, tp);
        MirrorPartitionDescription stopped = MirrorAssertions.describe(clusters.mirrors, "replay", topic, 0);

        try (Admin admin = clusters.destination.admin()) {
            admin.deleteConsumerGroups(List.of(InternalTopics.CONTROLLER_GROUP)).all().get();
        } catch (ExecutionException e) {
            assertInstanceOf(GroupIdNotFoundException.class, e.getCause(), "the controller no longer needs a group");
        }
        for (int broker : clusters.destination.brokerIds()) {
            clusters.destination.restartBroker(broker);
        }
        // Answered only by a controller that read the command log after the restart.
        clusters.mirrors.createClusterMirror("after-restart", MirrorAssertions.mirrorConfig(clusters.source)).all().get();
        assertStillStoppedWithItsWrites("replay", topic, before, stopped);

        // A client sends the START again under its id, as one that lost the answer might.
        ConsumerRecord<byte[], byte[]> start = commandRecords().stream()
            .filter(r -> RecordCodec.decodeCommand(r.value()) instanceof MirrorCommand c && c.op() == CommandOp.START
                && c.topics().equals(List.of(topic)))
            .findFirst().orElseThrow();
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(clusters.destination.bootstrapServers(), Map.of())) {
            producer.send(new ProducerRecord<>(InternalTopics.COMMANDS, 0, start.key(), start.value())).get();
        }
        String id = RecordCodec.decodeKey(start.key());
        TestUtils.waitFor(() -> results(id).size() == 2, MirrorAssertions.TIMEOUT, "no answer to the command sent again");
        CommandResult again = results(id).get(1);
        assertEquals(MirrorError.NONE, again.error(), "the first result: " + again);
        assertTrue(again.message().contains("already processed; it is not applied again"), again.message());
        clusters.mirrors.createClusterMirror("after-resend", MirrorAssertions.mirrorConfig(clusters.source)).all().get();
        assertStillStoppedWithItsWrites("replay", topic, before, stopped);

        Map<String, Integer> resultsPerId = new HashMap<>();
        commandRecords().forEach(r -> {
            if (RecordCodec.decodeCommand(r.value()) instanceof CommandResult result) {
                resultsPerId.merge(result.commandId(), 1, Integer::sum);
            }
        });
        resultsPerId.remove(id);
        assertTrue(resultsPerId.values().stream().allMatch(n -> n == 1), "every other command was answered once: " + resultsPerId);
    }

    /**
     * {@code --start} by pattern leaves a stopped topic alone; by name it refuses to remove the writes made since the
     * stop, saying how many, unless told to discard them: then the cut shows in describe.
     */
    @Test
    void startNeverDiscardsTheWritesToAStoppedTopicUnlessTold() throws Exception {
        String topic = "ord-stopped";
        TopicPartition tp = new TopicPartition(topic, 0);
        stoppedTopicWithLocalWrites("discard", topic, 7);
        long barrier = MirrorAssertions.describe(clusters.mirrors, "discard", topic, 0).barrierOffset();
        long end;
        try (Admin admin = clusters.destination.admin()) {
            end = MirrorAssertions.endOffset(admin, tp);
        }
        assertEquals(barrier + 1 + 7, end, "the log ends with the local writes after the barrier");
        createSourceTopic("ord-new");

        assertEquals(List.of("ord-new"), clusters.mirrors.startMirrorTopics("discard", List.of("ord-.*"), List.of()).topics().get(),
            "the pattern left the stopped topic out");
        assertEquals(DesiredState.STOPPED, topicOf("discard", topic).desiredState());

        ExecutionException refused = assertThrows(ExecutionException.class,
            () -> clusters.mirrors.startMirrorTopics("discard", List.of(topic), List.of()).all().get());
        ClusterMirrorException error = assertInstanceOf(ClusterMirrorException.class, refused.getCause());
        assertEquals(MirrorError.MIRROR_TOPIC_HAS_LOCAL_WRITES, error.error());
        assertTrue(error.getMessage().contains("holds 7 record(s) written since it was stopped (partition 0: [" + (barrier + 1) + ", "
            + end + "))"), error.getMessage());
        CliRun cli = CliRun.run(clusters.destination.bootstrapServers(), "--start", "--mirror", "discard", "--topics", topic);
        assertEquals(1, cli.exit());
        assertTrue(cli.err().startsWith("MIRROR_TOPIC_HAS_LOCAL_WRITES: topic '" + topic + "' holds 7 record(s)"), cli.err());
        assertTrue(cli.err().contains("--discard-local-writes"), cli.err());
        assertEquals(DesiredState.STOPPED, topicOf("discard", topic).desiredState(), "refused: nothing changed");

        cli = CliRun.run(clusters.destination.bootstrapServers(), "--start", "--mirror", "discard", "--topics", topic,
            "--discard-local-writes");
        assertEquals(0, cli.exit(), cli.err());
        MirrorAssertions.awaitCaughtUp(clusters.source, clusters.destination, topic, 1);
        MirrorPartitionDescription restarted = MirrorAssertions.describe(clusters.mirrors, "discard", topic, 0);
        assertEquals(barrier, restarted.truncatedFromOffset(), "cut back to the barrier: " + restarted);
        assertEquals(end, restarted.truncatedToOffset(), "the local writes were cut: " + restarted);
        MirrorAssertions.assertIdenticalLogs(clusters.source, clusters.destination, topic, 1);
        MirrorTopicDescription.Command last = topicOf("discard", topic).lastCommand();
        assertEquals("START", last.operation());
        assertTrue(last.result().contains("discarding the records written since the stop"), last.result());
    }

    /**
     * A command log deleted and re-created (a new topic id) does not wedge the controller, whose recorded position belongs
     * to the old log: the next STOP is applied at once. A command of the old log copied into the new one (a restore, a
     * replay) is refused, never applied again: its result went with the old log.
     */
    @Test
    void aReCreatedCommandLogTakesTheNextCommandAndNeverAppliesAnOldOneAgain() throws Exception {
        String topic = "recreated-log";
        createSourceTopic(topic);
        clusters.mirrors.createClusterMirror("recreated", MirrorAssertions.mirrorConfig(clusters.source)).all().get();
        clusters.mirrors.startMirrorTopics("recreated", List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitState(clusters.mirrors, "recreated", topic, 1, PartitionState.MIRRORING);
        ConsumerRecord<byte[], byte[]> start = commandRecords().stream()
            .filter(r -> RecordCodec.decodeCommand(r.value()) instanceof MirrorCommand c && c.op() == CommandOp.START
                && c.topics().equals(List.of(topic)))
            .findFirst().orElseThrow();
        String startId = RecordCodec.decodeKey(start.key());

        try (Admin admin = clusters.destination.admin()) {
            admin.deleteTopics(List.of(InternalTopics.COMMANDS)).all().get();
            TestUtils.waitFor(() -> !admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get()
                .contains(InternalTopics.COMMANDS), MirrorAssertions.TIMEOUT, "the command log to be deleted");
        }
        // The client creates the log again for its command, whose offset is below the controller's recorded position.
        assertTimeoutPreemptively(Duration.ofSeconds(40),
            () -> clusters.mirrors.stopMirrorTopics("recreated", List.of(topic), List.of()).all().get());
        MirrorAssertions.awaitState(clusters.mirrors, "recreated", topic, 1, PartitionState.STOPPED);

        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(clusters.destination.bootstrapServers(), Map.of())) {
            producer.send(new ProducerRecord<>(InternalTopics.COMMANDS, 0, start.key(), start.value())).get();
        }
        TestUtils.waitFor(() -> results(startId).size() == 1, MirrorAssertions.TIMEOUT, "no answer to the old START copied");
        CommandResult replayed = results(startId).get(0);
        assertEquals(MirrorError.INVALID_REQUEST, replayed.error(), replayed.toString());
        assertTrue(replayed.message().contains("may have been applied already"), replayed.message());
        assertEquals(DesiredState.STOPPED, topicOf("recreated", topic).desiredState(), "the old START was not applied again");
        assertEquals(PartitionState.STOPPED, MirrorAssertions.describe(clusters.mirrors, "recreated", topic, 0).state());
    }

    /** RE2/J matches in linear time: a pattern that backtracks forever in java.util.regex is answered at once. */
    @Test
    void aCatastrophicPatternIsAnsweredAndTheNextCommandWorks() throws Exception {
        String name = "a".repeat(64) + "b";
        createSourceTopic(name);
        clusters.mirrors.createClusterMirror("patterns", MirrorAssertions.mirrorConfig(clusters.source)).all().get();
        ExecutionException e = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> assertThrows(ExecutionException.class,
            () -> clusters.mirrors.startMirrorTopics("patterns", List.of("(a+)+$"), List.of()).all().get()));
        assertEquals(MirrorError.UNKNOWN_TOPIC_OR_PARTITION, assertInstanceOf(ClusterMirrorException.class, e.getCause()).error());
        e = assertThrows(ExecutionException.class,
            () -> clusters.mirrors.startMirrorTopics("patterns", List.of("(?=a)a+b"), List.of()).all().get());
        assertEquals(MirrorError.INVALID_REQUEST, assertInstanceOf(ClusterMirrorException.class, e.getCause()).error(),
            "refused by the client: lookaround is not supported");
        assertEquals(List.of(name), clusters.mirrors.startMirrorTopics("patterns", List.of("(a+)+b"), List.of()).topics().get());
    }

    /** A mirror whose topic mirrored the source's records, was stopped, and then got {@code localWrites} local records. */
    private static void stoppedTopicWithLocalWrites(String mirror, String topic, int localWrites) throws Exception {
        createSourceTopic(topic);
        clusters.mirrors.createClusterMirror(mirror, MirrorAssertions.mirrorConfig(clusters.source)).all().get();
        clusters.mirrors.startMirrorTopics(mirror, List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitCaughtUp(clusters.source, clusters.destination, topic, 1);
        clusters.mirrors.stopMirrorTopics(mirror, List.of(topic), List.of()).all().get();
        MirrorAssertions.awaitState(clusters.mirrors, mirror, topic, 1, PartitionState.STOPPED);
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(clusters.destination.bootstrapServers(), Map.of())) {
            Workloads.sendBatch(producer, topic, 0, "local", localWrites);
        }
    }

    private static void createSourceTopic(String topic) throws Exception {
        try (Admin admin = clusters.source.admin()) {
            Workloads.createTopics(admin, List.of(new NewTopic(topic, 1, (short) 1)));
        }
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(clusters.source.bootstrapServers(), Map.of())) {
            Workloads.sendBatch(producer, topic, 0, "source", 10);
        }
    }

    private static void assertStillStoppedWithItsWrites(String mirror, String topic, List<String> records,
                                                        MirrorPartitionDescription stopped) throws Exception {
        assertEquals(DesiredState.STOPPED, topicOf(mirror, topic).desiredState());
        MirrorPartitionDescription now = MirrorAssertions.describe(clusters.mirrors, mirror, topic, 0);
        assertEquals(PartitionState.STOPPED, now.state());
        assertEquals(stopped.barrierOffset(), now.barrierOffset());
        assertEquals(records, MirrorAssertions.readAll(clusters.destination, new TopicPartition(topic, 0)),
            "the local writes are all there");
    }

    private static MirrorTopicDescription topicOf(String mirror, String topic) throws Exception {
        return clusters.mirrors.describeClusterMirrors(List.of(mirror)).all().get().get(mirror).topics().stream()
            .filter(t -> t.topic().equals(topic)).findFirst().orElseThrow();
    }

    /** The results in the command log for a command id, in log order. */
    private static List<CommandResult> results(String commandId) throws Exception {
        List<CommandResult> results = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> r : commandRecords()) {
            if (RecordCodec.decodeCommand(r.value()) instanceof CommandResult result && result.commandId().equals(commandId)) {
                results.add(result);
            }
        }
        return results;
    }

    /** Every committed record of the command log that this test class's clients could decode. */
    private static List<ConsumerRecord<byte[], byte[]>> commandRecords() throws Exception {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, clusters.destination.bootstrapServers());
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.assign(List.of(COMMANDS));
            consumer.seekToBeginning(List.of(COMMANDS));
            long end = consumer.endOffsets(List.of(COMMANDS)).get(COMMANDS);
            long deadline = System.currentTimeMillis() + MirrorAssertions.TIMEOUT.toMillis();
            while (consumer.position(COMMANDS) < end) {
                if (System.currentTimeMillis() > deadline) {
                    throw new AssertionError("could not read " + COMMANDS + " to " + end);
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    if (isDecodable(r.value())) {
                        out.add(r);
                    }
                }
            }
        }
        return out;
    }

    private static boolean isDecodable(byte[] value) {
        try {
            return RecordCodec.decodeCommand(value) != null;
        } catch (RuntimeException e) {
            return false;
        }
    }
}
