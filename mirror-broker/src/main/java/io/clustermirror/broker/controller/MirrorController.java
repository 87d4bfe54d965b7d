package io.clustermirror.broker.controller;

import io.clustermirror.broker.LocalClients;
import io.clustermirror.broker.ThreadHealth;
import io.clustermirror.broker.auth.InternalOperations;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.LogEnds;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.image.MirrorDelta;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.image.MirrorImageReader;
import io.clustermirror.common.records.CommandResult;
import io.clustermirror.common.records.ControllerPositionRecord;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.common.secrets.BrokerClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
 */
public final class MirrorController implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MirrorController.class);
    private static final TopicPartition COMMANDS_PARTITION = new TopicPartition(InternalTopics.COMMANDS, 0);

    private final LocalClients clients;
    private final int nodeId;
    private final Supplier<MirrorImage> brokerImage;
    private final BrokerClientConfigs clientConfigs;
    private final ThreadHealth health;
    private final Thread thread;
    private final Object closeSignal = new Object();
    private volatile boolean running = true;
    /** The consumer the controller thread reads with now; woken up by close(). */
    private volatile KafkaConsumer<byte[], byte[]> activeConsumer;

    /**
     * @param brokerImage   this broker's tailed image: the source of actual partition states; the
     *                      controller keeps its own copy of the desired state, which it alone writes
     * @param clientConfigs how this broker turns mirror configs into source clients, and its sealing key
     * @param metrics       the broker's metrics registry, for the thread's health
     */
    public MirrorController(LocalClients clients, int nodeId, Supplier<MirrorImage> brokerImage, BrokerClientConfigs clientConfigs,
                            Metrics metrics) {
        this.clients = clients;
        this.nodeId = nodeId;
        this.brokerImage = brokerImage;
        this.clientConfigs = clientConfigs;
        this.health = new ThreadHealth(metrics, log, "controller-" + nodeId);
        this.thread = new Thread(this::run, "cluster-mirror-controller-" + nodeId);
        this.thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    private void run() {
        while (running) {
            try {
                runActive();
                return;
            } catch (ProducerFencedException e) {
                log.info("Mirror controller on broker {} fenced by a newer controller; stepping down", nodeId);
                return;
            } catch (WakeupException e) {
                return; // closing
            } catch (Exception e) {
                if (!running) {
                    return;
                }
                long backoffMs = health.failed("its activation (the command log is read again from the recorded position)", e);
                synchronized (closeSignal) {
                    try {
                        closeSignal.wait(backoffMs);
                    } catch (InterruptedException ie) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
            }
        }
    }

    /** One activation: take over the controller role, load the desired state, process commands until closed. */
    private void runActive() throws Exception {
        String adminClientId = InternalOperations.newClientId("cluster-mirror-" + nodeId + "-controller");
        try (Admin admin = clients.admin(adminClientId);
             KafkaProducer<byte[], byte[]> producer = clients.producer("controller", InternalTopics.CONTROLLER_TRANSACTIONAL_ID)) {
            InternalTopicsInitializer.ensureExistWithSafeConfigs(admin, List.of(InternalTopics.METADATA, InternalTopics.STATE));
            producer.initTransactions(); // before loading: the previous controller's open transaction is aborted or committed
            MirrorImage desired = SealingKeyPublication.publish(producer, clientConfigs, loadMetadata());
            String clusterId = admin.describeCluster().clusterId().get(30, TimeUnit.SECONDS);
            CommandProcessor processor = new CommandProcessor(new KafkaSourceCluster(clientConfigs),
                new KafkaDestinationCluster(admin, adminClientId), clusterId);
            long position = desired.controllerPosition().map(ControllerPositionRecord::nextOffset).orElse(0L);
            log.info("Mirror controller active on broker {}: {} mirrors, {} mirror topics; applying commands from offset {} of {}",
                nodeId, desired.mirrors().size(), desired.topics().size(), position, COMMANDS_PARTITION);
            processCommands(producer, processor, desired, new CommandLogCursor(position));
        }
    }

    private void processCommands(KafkaProducer<byte[], byte[]> producer, CommandProcessor processor, MirrorImage desired,
                                 CommandLogCursor cursor) {
        try (KafkaConsumer<byte[], byte[]> consumer = clients.consumer("controller-commands", true)) {
            activeConsumer = consumer;
            // First every result up to the current end, so that no command is applied again, also one read before its
            // own result when no position was recorded; then, from the start again, every record in order.
            LogEnds.readFromBeginning(consumer, List.of(COMMANDS_PARTITION), Time.SYSTEM, Long.MAX_VALUE,
                record -> cursor.learnResult(record.value()));
            consumer.seekToBeginning(List.of(COMMANDS_PARTITION));
            MirrorImage image = desired;
            while (running) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(500))) {
                    image = processOne(producer, processor, image, cursor, record);
                }
                health.working();
            }
        }
    }

    /** Acts on one record of the command log; returns the controller's new image. */
    private MirrorImage processOne(KafkaProducer<byte[], byte[]> producer, CommandProcessor processor, MirrorImage image,
                                   CommandLogCursor cursor, ConsumerRecord<byte[], byte[]> record) {
        CommandLogCursor.Step step = cursor.next(record.offset(), record.key(), record.value());
        CommandOutcome outcome = null;
        if (step instanceof CommandLogCursor.Unusable unusable) {
            log.error("Skipping the record at offset {} of {}: {}", record.offset(), COMMANDS_PARTITION, unusable.reason());
        } else if (step instanceof CommandLogCursor.Answer answer) {
            log.warn("Not applying the record at offset {} of {} (id {}): {}", record.offset(), COMMANDS_PARTITION,
                answer.result().commandId(), answer.result().message());
            outcome = new CommandOutcome(answer.result(), List.of(), List.of());
        } else if (step instanceof CommandLogCursor.Apply apply) {
            outcome = processor.process(mergeActualState(image), apply.command(), System.currentTimeMillis());
            log.info("Mirror command {} {} '{}' (id {}, offset {}): {} {}", apply.command().op(), apply.command().topics(),
                apply.command().mirror(), apply.command().commandId(), record.offset(), outcome.result().error(),
                outcome.result().message());
        }
        if (outcome == null) {
            return image; // the position moves with the next command's transaction
        }
        MirrorImage next = commit(producer, image, outcome, record.offset());
        if (next == null) {
            // Answered all the same, so that one command whose outcome cannot be written cannot hold up the others.
            outcome = CommandOutcome.failed(CommandResult.failed(outcome.result().commandId(), MirrorError.UNKNOWN_SERVER_ERROR,
                "the controller could not write the command's outcome, so nothing was changed (its log has the details); retry it"));
            next = commit(producer, image, outcome, record.offset());
            if (next == null) {
                throw new KafkaException("cannot write to " + InternalTopics.COMMANDS + " and " + InternalTopics.METADATA
                    + "; the controller starts again from its recorded position");
            }
        }
        cursor.committed(outcome.result());
        return next;
    }

    /**
     * Writes a command's result, metadata records and state tombstones with the controller's position after
     * {@code offset}, in one transaction.
     *
     * @return the controller's image with the writes, or null if the transaction was aborted
     */
    private MirrorImage commit(KafkaProducer<byte[], byte[]> producer, MirrorImage image, CommandOutcome outcome, long offset) {
        CommandResult result = outcome.result();
        ControllerPositionRecord position = new ControllerPositionRecord(offset + 1, result.commandId(), System.currentTimeMillis());
        MirrorDelta delta = new MirrorDelta(image);
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

    private static void send(KafkaProducer<byte[], byte[]> producer, MirrorDelta delta, byte[] key, byte[] value) {
        producer.send(new ProducerRecord<>(InternalTopics.METADATA, 0, key, value));
        delta.replayMetadata(key, value);
    }

    /** The controller's desired state combined with the broker's latest actual partition states (and mirror ACLs). */
    private MirrorImage mergeActualState(MirrorImage desired) {
        return brokerImage.get().withDesiredStateOf(desired);
    }

    /** Reads {@code __mirror_metadata} to its end: the desired state and position all previous controllers committed. */
    private MirrorImage loadMetadata() {
        try (KafkaConsumer<byte[], byte[]> consumer = clients.consumer("controller-load", true)) {
            activeConsumer = consumer;
            // Only the controller writes this topic; a record it cannot read is from a newer version or damage: skipped.
            return MirrorImageReader.replayFromBeginning(consumer, List.of(new TopicPartition(InternalTopics.METADATA, 0)),
                Time.SYSTEM, Long.MAX_VALUE, MirrorDelta::replayOrSkip).orElseThrow();
        }
    }

    @Override
    public void close() {
        running = false;
        synchronized (closeSignal) {
            closeSignal.notifyAll();
        }
        KafkaConsumer<byte[], byte[]> c = activeConsumer;
        if (c != null) {
            c.wakeup();
        }
        try {
            thread.join(15_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        health.close();
    }
}
