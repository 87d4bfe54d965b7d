package io.clustermirror.broker.controller;

import io.clustermirror.broker.LocalClients;
import io.clustermirror.broker.auth.InternalOperations;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.image.MirrorDelta;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.CommandLogEntry;
import io.clustermirror.common.records.CommandResult;
import io.clustermirror.common.records.MirrorCommand;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.common.secrets.BrokerClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The single writer of {@code __mirror_metadata}: runs on the broker that leads {@code __mirror_commands-0}.
 * It reads each request, asks the {@link CommandProcessor} what it means, and writes the result, the
 * metadata records and its own position in the command log in one transaction, so every command is
 * processed exactly once even across controller changes. A controller that lost its place is fenced by
 * the fixed transactional id: the new one's {@code initTransactions()} aborts and fences the old.
 */
public final class MirrorController implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MirrorController.class);
    private static final TopicPartition COMMANDS_PARTITION = new TopicPartition(InternalTopics.COMMANDS, 0);

    private final LocalClients clients;
    private final int nodeId;
    private final Supplier<MirrorImage> brokerImage;
    private final BrokerClientConfigs clientConfigs;
    private final Thread thread;
    private static final long RESTART_BACKOFF_MS = 5_000;
    private final Object closeSignal = new Object();
    private volatile boolean running = true;
    private volatile KafkaConsumer<byte[], byte[]> commandConsumer;

    /**
     * @param brokerImage   this broker's tailed image: the source of actual partition states; the
     *                      controller keeps its own copy of the desired state, which it alone writes
     * @param clientConfigs how this broker turns mirror configs into source clients, and its sealing key
     */
    public MirrorController(LocalClients clients, int nodeId, Supplier<MirrorImage> brokerImage, BrokerClientConfigs clientConfigs) {
        this.clients = clients;
        this.clientConfigs = clientConfigs;
        this.nodeId = nodeId;
        this.brokerImage = brokerImage;
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
                log.info("Mirror controller fenced by a newer controller; stepping down");
                return;
            } catch (WakeupException e) {
                return; // closing
            } catch (Exception e) {
                if (!running) {
                    return;
                }
                log.error("Mirror controller failed; it restarts in {} ms", RESTART_BACKOFF_MS, e);
                synchronized (closeSignal) {
                    try {
                        closeSignal.wait(RESTART_BACKOFF_MS);
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
            producer.initTransactions();
            MirrorImage desired = SealingKeyPublication.publish(producer, clientConfigs, loadMetadata());
            String clusterId = admin.describeCluster().clusterId().get(30, java.util.concurrent.TimeUnit.SECONDS);
            CommandProcessor processor = new CommandProcessor(new KafkaSourceCluster(clientConfigs),
                new KafkaDestinationCluster(admin, adminClientId), clusterId);
            log.info("Mirror controller active: {} mirrors, {} mirror topics", desired.mirrors().size(), desired.topics().size());
            processCommands(producer, processor, desired);
        }
    }

    private void processCommands(KafkaProducer<byte[], byte[]> producer, CommandProcessor processor, MirrorImage desired) {
        try (KafkaConsumer<byte[], byte[]> consumer = clients.consumer("controller-commands", true,
                Map.of(ConsumerConfig.GROUP_ID_CONFIG, InternalTopics.CONTROLLER_GROUP))) {
            commandConsumer = consumer;
            consumer.assign(List.of(COMMANDS_PARTITION));
            OffsetAndMetadata committed = consumer.committed(java.util.Set.of(COMMANDS_PARTITION)).get(COMMANDS_PARTITION);
            consumer.seek(COMMANDS_PARTITION, committed == null ? 0L : committed.offset());
            ConsumerGroupMetadata group = consumer.groupMetadata();
            MirrorImage image = desired;
            while (running) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(500))) {
                    image = processOne(producer, processor, image, record, group);
                }
            }
        }
    }

    /** Processes one record of the command log in its own transaction; returns the controller's new image. */
    private MirrorImage processOne(KafkaProducer<byte[], byte[]> producer, CommandProcessor processor, MirrorImage image,
                                   ConsumerRecord<byte[], byte[]> record, ConsumerGroupMetadata group) {
        CommandOutcome outcome = null;
        CommandLogEntry entry;
        try {
            entry = RecordCodec.decodeCommand(record.value());
        } catch (RuntimeException e) {
            log.error("Skipping unreadable command at offset {} of {}: {}", record.offset(), COMMANDS_PARTITION, e.toString());
            entry = null;
        }
        if (entry instanceof MirrorCommand command && (command.commandId() == null || command.commandId().isBlank())) {
            log.error("Skipping the command at offset {} of {}: it has no command id, so no result can answer it", record.offset(),
                COMMANDS_PARTITION);
        } else if (entry instanceof MirrorCommand command) {
            outcome = processor.process(mergeActualState(image), command, System.currentTimeMillis());
            log.info("Mirror command {} {} '{}' (id {}): {} {}", command.op(), command.topics(), command.mirror(), command.commandId(),
                outcome.result().error(), outcome.result().message());
        }
        producer.beginTransaction();
        MirrorDelta delta = new MirrorDelta(image);
        if (outcome != null) {
            CommandResult result = outcome.result();
            producer.send(new ProducerRecord<>(InternalTopics.COMMANDS, 0, RecordCodec.encodeKey(result.commandId()), RecordCodec.encodeCommand(result)));
            for (CommandOutcome.MetadataWrite w : outcome.metadataWrites()) {
                byte[] key = RecordCodec.encodeKey(w.key());
                producer.send(new ProducerRecord<>(InternalTopics.METADATA, 0, key, w.value()));
                delta.replayMetadata(key, w.value());
            }
            for (String stateKey : outcome.stateTombstones()) {
                producer.send(new ProducerRecord<>(InternalTopics.STATE, RecordCodec.encodeKey(stateKey), null));
            }
        }
        producer.sendOffsetsToTransaction(Map.of(COMMANDS_PARTITION, new OffsetAndMetadata(record.offset() + 1)), group);
        try {
            producer.commitTransaction();
        } catch (ProducerFencedException e) {
            throw e;
        } catch (KafkaException e) {
            // The command's effects were not written; its result will not be either. The client times out and may retry.
            log.error("Could not commit the outcome of the command at offset {}; it is not applied", record.offset(), e);
            producer.abortTransaction();
            return image;
        }
        return delta.apply();
    }

    /** The controller's desired state combined with the broker's latest actual partition states (and mirror ACLs). */
    private MirrorImage mergeActualState(MirrorImage desired) {
        return brokerImage.get().withDesiredStateOf(desired);
    }

    /** Reads {@code __mirror_metadata} to its end: the desired state all previous controllers committed. */
    private MirrorImage loadMetadata() {
        TopicPartition tp = new TopicPartition(InternalTopics.METADATA, 0);
        try (KafkaConsumer<byte[], byte[]> consumer = clients.consumer("controller-load", true)) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            MirrorDelta delta = new MirrorDelta(MirrorImage.EMPTY);
            while (consumer.position(tp) < end && running) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    delta.replayMetadata(r.key(), r.value());
                }
            }
            return delta.apply();
        }
    }

    @Override
    public void close() {
        running = false;
        synchronized (closeSignal) {
            closeSignal.notifyAll();
        }
        KafkaConsumer<byte[], byte[]> c = commandConsumer;
        if (c != null) {
            c.wakeup();
        }
        try {
            thread.join(15_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
