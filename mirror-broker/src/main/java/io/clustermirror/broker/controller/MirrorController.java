package io.clustermirror.broker.controller;

import io.clustermirror.broker.node.LocalClients;
import io.clustermirror.broker.node.ThreadHealth;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.LogEnds;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.image.MirrorDelta;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.image.MirrorImageReader;
import io.clustermirror.common.records.CommandResult;
import io.clustermirror.common.records.ControllerPositionRecord;
import io.clustermirror.common.records.ControllerProblem;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.common.secrets.BrokerClientConfigs;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Supplier;

/**
 * The single writer of {@code __mirror_metadata}: runs on the broker that leads {@code __mirror_commands-0}.
 * It reads each request, asks the {@link CommandProcessor} what it means, and writes the result, the metadata records
 * and its own position in the command log ({@link ControllerPositionRecord}, in {@code __mirror_metadata}) in one
 * transaction. On activation it reads that position back and reads the command log from its start, applying only the
 * commands at or after the position whose ids have no result yet ({@link CommandLogCursor}): every command is applied
 * exactly once, across controller changes, restarts of every broker, and whatever happens to consumer groups. A
 * controller that lost its place is fenced by the fixed transactional id: the new one's {@code initTransactions()}
 * aborts and fences the old.
 *
 * <p>Never wedged: a record it cannot use is answered with an error (or logged when it has no id) and the next one is
 * read; a command whose outcome cannot be committed is answered with an error in a transaction of its own; an
 * activation that fails is retried with backoff, reported by the {@code thread-healthy} metric ({@link ThreadHealth}).
 *
 * <p>The work is done in rounds ({@link #runOnce()}): the controller's thread runs them, a unit test runs them itself with
 * Kafka's client test doubles behind {@link ControllerSeams} and a {@code MockTime}.
 */
public final class MirrorController implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MirrorController.class);
    private static final TopicPartition COMMANDS_PARTITION = new TopicPartition(InternalTopics.COMMANDS, 0);
    private static final Duration POLL = Duration.ofMillis(500);
    /** How often the active controller checks that the command log it reads is still the one of {@code __mirror_commands}. */
    static final long COMMAND_LOG_CHECK_MS = 5_000;
    /**
     * The longest wait between two attempts of a failing controller, each of which reports its problem to clients waiting
     * in the command log ({@link ControllerProblem}): they learn why within seconds.
     */
    static final long FAILED_RETRY_MAX_MS = 4_000;
    /** What {@link #runOnce()} returns when the controller stopped for good (closed, or fenced by a newer controller). */
    static final long STOPPED = -1;

    private final ControllerSeams seams;
    private final Time time;
    private final int nodeId;
    private final Supplier<MirrorImage> brokerImage;
    private final ThreadHealth health;
    private final Thread thread;
    private final Object closeSignal = new Object();
    private volatile boolean running = true;
    /** The consumer the controller reads with now; woken up by close(). */
    private volatile Consumer<byte[], byte[]> activeConsumer;
    /** The current activation, null until activated and after a failure (whoever runs the rounds only). */
    private Active active;

    /** One activation: its clients, its decisions, where it is in the command log and the desired state it wrote. */
    private static final class Active {
        final ControllerSeams.Activation activation;
        final Consumer<byte[], byte[]> commands;
        final CommandProcessor processor;
        final CommandLogCursor cursor;
        /** The topic id of the command log this activation reads: its positions are offsets in that log only. */
        final String commandsTopicId;
        MirrorImage image;
        long nextCommandLogCheckMs;

        Active(ControllerSeams.Activation activation, Consumer<byte[], byte[]> commands, CommandProcessor processor,
               CommandLogCursor cursor, String commandsTopicId, MirrorImage image, long nextCommandLogCheckMs) {
            this.activation = activation;
            this.commands = commands;
            this.processor = processor;
            this.cursor = cursor;
            this.commandsTopicId = commandsTopicId;
            this.image = image;
            this.nextCommandLogCheckMs = nextCommandLogCheckMs;
        }
    }

    /**
     * @param brokerImage   this broker's tailed image: the source of actual partition states; the
     *                      controller keeps its own copy of the desired state, which it alone writes
     * @param clientConfigs how this broker turns mirror configs into source clients, and its sealing key
     * @param metrics       the broker's metrics registry, for the thread's health
     */
    public MirrorController(LocalClients clients, int nodeId, Supplier<MirrorImage> brokerImage, BrokerClientConfigs clientConfigs,
                            Metrics metrics) {
        this(ControllerSeams.of(clients, nodeId, clientConfigs), Time.SYSTEM, nodeId, brokerImage, metrics);
    }

    /** @param time the clock of command processing and of the recorded position */
    MirrorController(ControllerSeams seams, Time time, int nodeId, Supplier<MirrorImage> brokerImage, Metrics metrics) {
        this.seams = seams;
        this.time = time;
        this.nodeId = nodeId;
        this.brokerImage = brokerImage;
        this.health = new ThreadHealth(metrics, log, "controller-" + nodeId, FAILED_RETRY_MAX_MS);
        this.thread = new Thread(this::run, "cluster-mirror-controller-" + nodeId);
        this.thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    private void run() {
        try {
            while (running) {
                long waitMs = runOnce();
                if (waitMs == STOPPED) {
                    return;
                }
                if (waitMs > 0) {
                    synchronized (closeSignal) {
                        if (running) {
                            closeSignal.wait(waitMs);
                        }
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            deactivate();
        }
    }

    /**
     * One round: activates the controller if it is not active, then reads one poll of the command log and acts on it. A
     * failure ends the activation (the next round activates again from the recorded position) and is recorded in the
     * thread's health.
     *
     * @return how long to wait before the next round (0: at once), or {@link #STOPPED}
     */
    long runOnce() {
        try {
            if (active == null) {
                active = activate();
            } else if (time.milliseconds() >= active.nextCommandLogCheckMs && commandLogReplaced(active)) {
                deactivate();
                return 0; // the next round reads the new log
            }
            for (ConsumerRecord<byte[], byte[]> record : active.commands.poll(POLL)) {
                processOne(active, record);
            }
            health.working();
            return 0;
        } catch (ProducerFencedException e) {
            log.info("Mirror controller on broker {} fenced by a newer controller; stepping down", nodeId);
            deactivate();
            return STOPPED;
        } catch (WakeupException e) {
            deactivate();
            return STOPPED; // closing
        } catch (Exception e) {
            deactivate();
            if (!running) {
                return STOPPED;
            }
            seams.reportProblem(new ControllerProblem(nodeId, problemOf(e), time.milliseconds()));
            return health.failed("its activation (the command log is read again from the recorded position)", e);
        }
    }

    /** One line: the failure and, when it wraps another with more to say, that one too. */
    static String problemOf(Throwable e) {
        String line = e.getClass().getSimpleName() + ": " + e.getMessage();
        Throwable cause = e.getCause();
        if (cause != null && cause.getMessage() != null && (e.getMessage() == null || !e.getMessage().contains(cause.getMessage()))) {
            line += " (" + cause.getClass().getSimpleName() + ": " + cause.getMessage() + ")";
        }
        return line;
    }

    /** Takes over the controller role, loads the desired state and reads the command log's results up to its end. */
    private Active activate() throws Exception {
        ControllerSeams.Activation activation = seams.activate();
        Consumer<byte[], byte[]> commands = null;
        try {
            activation.producer().initTransactions(); // before loading: the previous controller's open transaction is aborted or committed
            MirrorImage desired = activation.publishSealingKey(loadMetadata());
            CommandProcessor processor = activation.processor();
            String commandsTopicId = activation.commandsTopicId();
            commands = seams.consumer("controller-commands");
            activeConsumer = commands;
            List<TopicPartition> commandLog = List.of(COMMANDS_PARTITION);
            commands.assign(commandLog);
            CommandLogCursor cursor = CommandLogCursor.resume(desired.controllerPosition(), commandsTopicId,
                commands.beginningOffsets(commandLog).get(COMMANDS_PARTITION), commands.endOffsets(commandLog).get(COMMANDS_PARTITION));
            cursor.lostBefore().ifPresent(why -> log.warn("Mirror controller on broker {}: {}. It reads the new log from its start and "
                + "refuses, as possibly applied already, each command written no later than {} that it has no result for", nodeId, why,
                Instant.ofEpochMilli(cursor.forgottenUpToMs())));
            log.info("Mirror controller active on broker {}: {} mirrors, {} mirror topics; applying commands from offset {} of {} "
                + "(topic id {})", nodeId, desired.mirrors().size(), desired.topics().size(), cursor.startOffset(), COMMANDS_PARTITION,
                commandsTopicId);
            // First every result up to the current end, so that no command is applied again, also one read before its own
            // result when no position was recorded; then, from the start again, every record in order.
            LogEnds.readFromBeginning(commands, commandLog, time, Long.MAX_VALUE, record -> cursor.learn(record.timestamp(), record.value()));
            commands.seekToBeginning(commandLog);
            return new Active(activation, commands, processor, cursor, commandsTopicId, desired,
                time.milliseconds() + COMMAND_LOG_CHECK_MS);
        } catch (Exception | Error e) {
            if (commands != null) {
                commands.close();
            }
            activation.close();
            throw e;
        }
    }

    /**
     * Whether {@code __mirror_commands} is no longer the log the activation reads (deleted, or re-created with a new topic
     * id): a consumer would follow a re-created log silently from its start, where every offset below the recorded
     * position would be skipped. Checked every {@value #COMMAND_LOG_CHECK_MS} ms.
     */
    private boolean commandLogReplaced(Active active) throws Exception {
        active.nextCommandLogCheckMs = time.milliseconds() + COMMAND_LOG_CHECK_MS;
        String now;
        try {
            now = active.activation.commandsTopicId();
        } catch (UnknownTopicOrPartitionException e) {
            now = null;
        }
        if (active.commandsTopicId.equals(now)) {
            return false;
        }
        log.warn("Mirror controller on broker {}: {} was {} (topic id {} being read, {} now); activating again on the new log",
            nodeId, InternalTopics.COMMANDS, now == null ? "deleted" : "re-created", active.commandsTopicId, now == null ? "none" : now);
        return true;
    }

    /** Ends the current activation, if any, releasing its clients. */
    private void deactivate() {
        if (active != null) {
            active.commands.close();
            active.activation.close();
            active = null;
        }
    }

    /** Acts on one record of the command log, moving the activation's image on. */
    private void processOne(Active active, ConsumerRecord<byte[], byte[]> record) {
        CommandLogCursor.Step step = active.cursor.next(record.offset(), record.timestamp(), record.key(), record.value());
        CommandOutcome outcome = null;
        if (step instanceof CommandLogCursor.Unusable unusable) {
            log.error("Skipping the record at offset {} of {}: {}", record.offset(), COMMANDS_PARTITION, unusable.reason());
        } else if (step instanceof CommandLogCursor.Answer answer) {
            log.warn("Not applying the record at offset {} of {} (id {}): {}", record.offset(), COMMANDS_PARTITION,
                answer.result().commandId(), answer.result().message());
            outcome = new CommandOutcome(answer.result(), List.of(), List.of());
        } else if (step instanceof CommandLogCursor.Apply apply) {
            outcome = active.processor.process(mergeActualState(active.image), apply.command(), time.milliseconds());
            log.info("Mirror command {} {} '{}' (id {}, offset {}): {} {}", apply.command().op(), apply.command().topics(),
                apply.command().mirror(), apply.command().commandId(), record.offset(), outcome.result().error(),
                outcome.result().message());
        }
        if (outcome == null) {
            return; // the position moves with the next command's transaction
        }
        Producer<byte[], byte[]> producer = active.activation.producer();
        MirrorImage next = commit(producer, active, outcome, record.offset());
        if (next == null) {
            // Answered all the same, so that one command whose outcome cannot be written cannot hold up the others.
            outcome = CommandOutcome.failed(CommandResult.failed(outcome.result().commandId(), MirrorError.UNKNOWN_SERVER_ERROR,
                "the controller could not write the command's outcome, so nothing was changed (its log has the details); retry it"));
            next = commit(producer, active, outcome, record.offset());
            if (next == null) {
                throw new KafkaException("cannot write to " + InternalTopics.COMMANDS + " and " + InternalTopics.METADATA
                    + "; the controller starts again from its recorded position");
            }
        }
        active.cursor.committed(outcome.result(), time.milliseconds());
        active.image = next;
    }

    /**
     * Writes a command's result, metadata records and state tombstones with the controller's position after
     * {@code offset}, in one transaction.
     *
     * @return the controller's image with the writes, or null if the transaction was aborted
     */
    private MirrorImage commit(Producer<byte[], byte[]> producer, Active active, CommandOutcome outcome, long offset) {
        CommandResult result = outcome.result();
        ControllerPositionRecord position = new ControllerPositionRecord(offset + 1, result.commandId(), time.milliseconds(),
            active.commandsTopicId);
        MirrorDelta delta = new MirrorDelta(active.image);
        producer.beginTransaction();
        producer.send(new ProducerRecord<>(InternalTopics.COMMANDS, 0, RecordCodec.encodeKey(result.commandId()), RecordCodec.encodeCommand(result)));
        for (CommandOutcome.MetadataWrite w : outcome.metadataWrites()) {
            send(producer, delta, RecordCodec.encodeKey(w.key()), w.value());
        }
        send(producer, delta, RecordCodec.encodeKey(RecordCodec.CONTROLLER_POSITION_KEY), RecordCodec.encodeControllerPosition(position));
        for (String stateKey : outcome.stateTombstones()) {
            producer.send(new ProducerRecord<>(InternalTopics.STATE, RecordCodec.encodeKey(stateKey), null));
        }
        try {
            producer.commitTransaction();
            return delta.apply();
        } catch (ProducerFencedException e) {
            throw e;
        } catch (KafkaException e) {
            log.error("Could not commit the outcome of the command at offset {} of {} (id {}); it is not applied", offset,
                COMMANDS_PARTITION, result.commandId(), e);
            producer.abortTransaction();
            return null;
        }
    }

    private static void send(Producer<byte[], byte[]> producer, MirrorDelta delta, byte[] key, byte[] value) {
        producer.send(new ProducerRecord<>(InternalTopics.METADATA, 0, key, value));
        delta.replayMetadata(key, value);
    }

    /** The controller's desired state combined with the broker's latest actual partition states (and mirror ACLs). */
    private MirrorImage mergeActualState(MirrorImage desired) {
        return brokerImage.get().withDesiredStateOf(desired);
    }

    /** Reads {@code __mirror_metadata} to its end: the desired state and position all previous controllers committed. */
    private MirrorImage loadMetadata() {
        try (Consumer<byte[], byte[]> consumer = seams.consumer("controller-load")) {
            activeConsumer = consumer;
            // Only the controller writes this topic; a record it cannot read is from a newer version or damage: skipped.
            return MirrorImageReader.replayFromBeginning(consumer, List.of(new TopicPartition(InternalTopics.METADATA, 0)),
                time, Long.MAX_VALUE, MirrorDelta::replayOrSkip).orElseThrow();
        }
    }

    @Override
    public void close() {
        running = false;
        synchronized (closeSignal) {
            closeSignal.notifyAll();
        }
        Consumer<byte[], byte[]> c = activeConsumer;
        if (c != null) {
            c.wakeup();
        }
        if (thread.isAlive()) {
            try {
                thread.join(15_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        } else if (thread.getState() == Thread.State.NEW) {
            deactivate(); // rounds were run by the caller (tests)
        }
        health.close();
    }
}
