package io.clustermirror.broker.controller;

import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.CommandLogEntry;
import io.clustermirror.common.records.CommandOp;
import io.clustermirror.common.records.CommandResult;
import io.clustermirror.common.records.ControllerPositionRecord;
import io.clustermirror.common.records.ControllerProblem;
import io.clustermirror.common.records.MirrorCommand;
import io.clustermirror.common.records.RecordCodec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The controller's rounds driven by the test ({@link MirrorController#runOnce()}) on Kafka's {@link MockConsumer},
 * {@link MockProducer} and {@link MockTime}, over a model of the internal topics' committed records: activation, the order
 * of commands, exactly-once application across activations, a failed commit, fencing.
 */
class MirrorControllerRoundsTest {
    private static final TopicPartition COMMANDS = new TopicPartition(InternalTopics.COMMANDS, 0);
    private static final TopicPartition METADATA = new TopicPartition(InternalTopics.METADATA, 0);
    private static final Map<String, String> CONFIGS = Map.of("bootstrap.servers", "source:9092");

    private final MockTime time = new MockTime();
    private final Metrics metrics = new Metrics();
    /** The committed records of each partition in offset order: what a read_committed consumer reads. */
    private final Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> logs = new HashMap<>();
    private final List<LogConsumer> consumers = new ArrayList<>();
    private final List<MockProducer<byte[], byte[]>> producers = new ArrayList<>();
    /** How many of each producer's committed records are in {@link #logs}. */
    private final Map<MockProducer<byte[], byte[]>, Integer> settled = new HashMap<>();
    private final List<MirrorController> controllers = new ArrayList<>();
    private RuntimeException commitFailure;
    private RuntimeException activationFailure;
    /** The topic id of the command log now. */
    private String commandsTopicId = "commands-log-1";

    /** A consumer of {@link #logs}: it finds a partition's records when it is assigned it or seeks to its beginning. */
    private final class LogConsumer extends MockConsumer<byte[], byte[]> {
        LogConsumer() {
            super("earliest");
        }

        @Override
        public synchronized void assign(Collection<TopicPartition> partitions) {
            super.assign(partitions);
            for (TopicPartition tp : partitions) {
                updateBeginningOffsets(Map.of(tp, 0L));
                updateEndOffsets(Map.of(tp, (long) log(tp).size()));
            }
        }

        @Override
        public synchronized void seekToBeginning(Collection<TopicPartition> partitions) {
            super.seekToBeginning(partitions);
            // Records below the position are skipped by poll, so records added again are returned once.
            partitions.forEach(tp -> log(tp).forEach(this::addRecord));
        }
    }

    private final ControllerSeams seams = new ControllerSeams() {
        @Override
        public org.apache.kafka.clients.consumer.Consumer<byte[], byte[]> consumer(String clientSuffix) {
            LogConsumer consumer = new LogConsumer();
            consumers.add(consumer);
            return consumer;
        }

        @Override
        public void reportProblem(ControllerProblem problem) {
            append(COMMANDS, RecordCodec.encodeKey(RecordCodec.CONTROLLER_PROBLEM_KEY), RecordCodec.encodeCommand(problem));
        }

        @Override
        public Activation activate() {
            if (activationFailure != null) {
                throw activationFailure;
            }
            MockProducer<byte[], byte[]> producer = new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
            if (commitFailure != null) {
                producer.commitTransactionException = commitFailure;
            }
            producers.add(producer);
            return new Activation() {
                @Override
                public org.apache.kafka.clients.producer.Producer<byte[], byte[]> producer() {
                    return producer;
                }

                @Override
                public MirrorImage publishSealingKey(MirrorImage desired) {
                    return desired;
                }

                @Override
                public String commandsTopicId() {
                    return commandsTopicId;
                }

                @Override
                public CommandProcessor processor() {
                    return new CommandProcessor(new FakeClusters.FakeSource(), new FakeClusters.FakeDestination(), "destination-cluster-id");
                }

                @Override
                public void close() {
                    producer.close();
                }
            };
        }
    };

    @AfterEach
    void close() {
        controllers.forEach(MirrorController::close);
        metrics.close();
    }

    private MirrorController newController() {
        MirrorController controller = new MirrorController(seams, time, 3, () -> MirrorImage.EMPTY, metrics);
        controllers.add(controller);
        return controller;
    }

    private List<ConsumerRecord<byte[], byte[]>> log(TopicPartition tp) {
        return logs.computeIfAbsent(tp, k -> new ArrayList<>());
    }

    /** Commits a record to a partition: the open consumers assigned to it see it. */
    private void append(TopicPartition tp, byte[] key, byte[] value) {
        List<ConsumerRecord<byte[], byte[]>> log = log(tp);
        ConsumerRecord<byte[], byte[]> record = new ConsumerRecord<>(tp.topic(), tp.partition(), log.size(), key, value);
        log.add(record);
        for (LogConsumer consumer : consumers) {
            if (!consumer.closed() && consumer.assignment().contains(tp)) {
                consumer.addRecord(record);
                consumer.updateEndOffsets(Map.of(tp, (long) log.size()));
            }
        }
    }

    private void appendCommand(String id, CommandOp op, String mirror) {
        appendCommand(id, op, mirror, 1L);
    }

    private void appendCommand(String id, CommandOp op, String mirror, long timestampMs) {
        append(COMMANDS, RecordCodec.encodeKey(id), RecordCodec.encodeCommand(new MirrorCommand(id, op, mirror,
            op == CommandOp.CREATE ? CONFIGS : Map.of(), List.of(), List.of(), timestampMs)));
    }

    /** Runs a round, then moves what the controller's transactions committed into the logs. */
    private long round(MirrorController controller) {
        long wait = controller.runOnce();
        for (MockProducer<byte[], byte[]> producer : producers) {
            List<ProducerRecord<byte[], byte[]>> committed = producer.history();
            for (ProducerRecord<byte[], byte[]> r : committed.subList(settled.getOrDefault(producer, 0), committed.size())) {
                append(new TopicPartition(r.topic(), r.partition() == null ? 0 : r.partition()), r.key(), r.value());
            }
            settled.put(producer, committed.size());
        }
        return wait;
    }

    private List<CommandResult> results() {
        List<CommandResult> results = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> r : log(COMMANDS)) {
            CommandLogEntry entry = RecordCodec.decodeCommand(r.value());
            if (entry instanceof CommandResult result) {
                results.add(result);
            }
        }
        return results;
    }

    /** The last value of a {@code __mirror_metadata} key, as compaction keeps it. */
    private Optional<byte[]> metadata(String key) {
        byte[] value = null;
        for (ConsumerRecord<byte[], byte[]> r : log(METADATA)) {
            if (RecordCodec.decodeKey(r.key()).equals(key)) {
                value = r.value();
            }
        }
        return Optional.ofNullable(value);
    }

    private ControllerPositionRecord position() {
        return RecordCodec.decodeControllerPosition(metadata(RecordCodec.CONTROLLER_POSITION_KEY).orElseThrow());
    }

    private double metric(String name) {
        return HealthMetrics.value(metrics, "controller-3", name);
    }

    @Test
    void anActivatedControllerAppliesCommandsInLogOrderEachInOneTransaction() {
        appendCommand("c1", CommandOp.CREATE, "a");
        appendCommand("c2", CommandOp.CREATE, "b");
        appendCommand("c3", CommandOp.CREATE, "a");
        MirrorController controller = newController();
        time.sleep(1_000);
        assertEquals(0, round(controller));

        List<CommandResult> results = results();
        assertEquals(List.of("c1", "c2", "c3"), results.stream().map(CommandResult::commandId).toList());
        assertEquals(List.of(MirrorError.NONE, MirrorError.NONE, MirrorError.CLUSTER_MIRROR_ALREADY_EXISTS),
            results.stream().map(CommandResult::error).toList(), "c3 sees the mirror c1 created before it");
        assertTrue(metadata(RecordCodec.mirrorKey("a")).isPresent() && metadata(RecordCodec.mirrorKey("b")).isPresent());
        assertEquals(new ControllerPositionRecord(3, "c3", time.milliseconds(), "commands-log-1"), position(),
            "the position after the last command, stamped by the controller's clock");
        assertEquals(3, producers.get(0).commitCount(), "the result, the records and the position in one transaction each");

        appendCommand("c4", CommandOp.DELETE, "nope");
        round(controller);
        assertEquals("c4", results().get(3).commandId());
        assertEquals(MirrorError.UNKNOWN_CLUSTER_MIRROR, results().get(3).error());
        assertEquals(7, position().nextOffset(), "c4 at offset 6, after c1-c3 and their results");
    }

    @Test
    void aNewControllerAppliesNothingTwice() {
        appendCommand("c1", CommandOp.CREATE, "a");
        MirrorController first = newController();
        round(first);
        first.close();
        appendCommand("c2", CommandOp.CREATE, "b");

        MirrorController second = newController();
        round(second);
        assertEquals(List.of("c1", "c2"), results().stream().map(CommandResult::commandId).toList(), "c1 is not answered again");
        assertEquals(1, producers.get(1).commitCount(), "only c2, after the recorded position");
    }

    @Test
    void aCommandWhoseResultIsInTheLogIsAnsweredWithItAndNotApplied() {
        // __mirror_metadata lost (no position): the command log still holds c1 and its result.
        appendCommand("c1", CommandOp.CREATE, "a");
        append(COMMANDS, RecordCodec.encodeKey("c1"), RecordCodec.encodeCommand(CommandResult.ok("c1", "created", List.of())));
        round(newController());
        assertTrue(metadata(RecordCodec.mirrorKey("a")).isEmpty(), "c1 is not applied again");
        CommandResult answer = results().get(1);
        assertEquals("c1", answer.commandId());
        assertTrue(answer.message().contains("already processed"), answer.message());
        assertEquals(1, position().nextOffset());
    }

    /**
     * The command log deleted and re-created under an active controller: it notices the new topic id, reads the new log
     * from its start (below its recorded position) and applies the new command; a copy of a command of the old log, whose
     * result went with it, is refused rather than applied again.
     */
    @Test
    void aReCreatedCommandLogIsReadFromItsStartAndACopyOfAnOldCommandIsRefused() {
        appendCommand("c1", CommandOp.CREATE, "a");
        appendCommand("c2", CommandOp.CREATE, "b");
        MirrorController controller = newController();
        round(controller);
        assertEquals(2, position().nextOffset(), "c1 and c2 at offsets 0 and 1");
        tombstoneMirror("a"); // the mirror 'a' is gone again, so applying c1 a second time would create it

        log(COMMANDS).clear();
        commandsTopicId = "commands-log-2";
        time.sleep(1_000);
        appendCommand("c3", CommandOp.CREATE, "c", time.milliseconds());
        appendCommand("c1", CommandOp.CREATE, "a"); // written at 1, before the controller's last commit on the old log
        time.sleep(MirrorController.COMMAND_LOG_CHECK_MS);
        round(controller); // notices the new log
        round(controller); // activates on it
        assertEquals(List.of("c3", "c1"), results().stream().map(CommandResult::commandId).toList());
        assertEquals(MirrorError.NONE, results().get(0).error());
        assertTrue(metadata(RecordCodec.mirrorKey("c")).isPresent(), "the new command is applied");
        assertEquals(MirrorError.INVALID_REQUEST, results().get(1).error());
        assertTrue(results().get(1).message().contains("may have been applied already"), results().get(1).message());
        assertTrue(metadata(RecordCodec.mirrorKey("a")).isEmpty(), "the old command is not applied again");
        assertEquals(new ControllerPositionRecord(2, "c1", time.milliseconds(), "commands-log-2"), position());
    }

    private void tombstoneMirror(String mirror) {
        append(METADATA, RecordCodec.encodeKey(RecordCodec.mirrorKey(mirror)), null);
    }

    @Test
    void aFailedCommitEndsTheActivationAndTheNextOneAppliesTheCommand() {
        appendCommand("c1", CommandOp.CREATE, "a");
        commitFailure = new KafkaException("the transaction coordinator is unavailable");
        MirrorController controller = newController();
        assertEquals(1_000, round(controller), "retried after a backoff");
        assertEquals(0.0, metric("thread-healthy"));
        assertTrue(results().isEmpty() && log(METADATA).isEmpty(), "nothing of an aborted transaction is committed");
        assertTrue(consumers.stream().allMatch(MockConsumer::closed), "the failed activation released its consumers");

        commitFailure = null;
        assertEquals(0, round(controller));
        assertEquals(2, producers.size(), "activated again");
        assertEquals(1.0, metric("thread-healthy"));
        assertEquals(MirrorError.NONE, results().get(0).error());
        assertTrue(metadata(RecordCodec.mirrorKey("a")).isPresent());
    }

    @Test
    void aFencedControllerStepsDownWithoutWriting() {
        MirrorController controller = newController();
        round(controller);
        producers.get(0).fenceProducer(); // a newer controller initialized the same transactional id
        appendCommand("c1", CommandOp.CREATE, "a");
        assertEquals(MirrorController.STOPPED, round(controller));
        assertTrue(results().isEmpty());
        assertTrue(producers.get(0).closed() && consumers.stream().allMatch(MockConsumer::closed));
    }

    /**
     * A controller that cannot take its role says why where clients wait for their results, after every attempt, and
     * attempts again within seconds; once it works, the problem records are no commands to it.
     */
    @Test
    void aFailingActivationReportsItsProblemInTheCommandLogAndRetriesWithinSeconds() {
        appendCommand("c1", CommandOp.CREATE, "a");
        activationFailure = new IllegalStateException("Kafka's transaction log __transaction_state cannot be created",
            new KafkaException("replication factor 3 larger than 1 broker"));
        MirrorController controller = newController();
        long longestWait = 0;
        for (int attempt = 1; attempt <= 6; attempt++) {
            longestWait = Math.max(longestWait, round(controller));
            time.sleep(longestWait);
        }
        assertEquals(MirrorController.FAILED_RETRY_MAX_MS, longestWait, "the retries wait no longer than that");
        List<ControllerProblem> problems = log(COMMANDS).stream()
            .filter(r -> RecordCodec.decodeKey(r.key()).equals(RecordCodec.CONTROLLER_PROBLEM_KEY))
            .map(r -> (ControllerProblem) RecordCodec.decodeCommand(r.value())).toList();
        assertEquals(6, problems.size(), "one report per attempt");
        assertEquals(new ControllerProblem(3, "IllegalStateException: Kafka's transaction log __transaction_state cannot be created "
            + "(KafkaException: replication factor 3 larger than 1 broker)", problems.get(0).atMs()), problems.get(0));
        assertTrue(results().isEmpty());

        activationFailure = null;
        assertEquals(0, round(controller));
        assertEquals(List.of("c1"), results().stream().map(CommandResult::commandId).toList(), "the problems are no commands");
        assertEquals(MirrorError.NONE, results().get(0).error());
    }
}
