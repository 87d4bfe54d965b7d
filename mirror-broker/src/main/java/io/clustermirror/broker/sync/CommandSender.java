package io.clustermirror.broker.sync;

import io.clustermirror.broker.node.LocalClients;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.records.CommandLogEntry;
import io.clustermirror.common.records.CommandOp;
import io.clustermirror.common.records.CommandResult;
import io.clustermirror.common.records.HeldChange;
import io.clustermirror.common.records.MirrorCommand;
import io.clustermirror.common.records.RecordCodec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Sends commands to the MirrorController the way the admin client does: a {@link MirrorCommand} in
 * {@code __mirror_commands}, then the controller's {@link CommandResult} for it, read from the command's offset
 * on. The controller stays the single writer of {@code __mirror_metadata}. One per sync task (the consumer is
 * not thread-safe); the producer is shared.
 */
final class CommandSender implements AutoCloseable {
    private static final TopicPartition COMMANDS = new TopicPartition(InternalTopics.COMMANDS, 0);

    private final Producer<byte[], byte[]> producer;
    private final KafkaConsumer<byte[], byte[]> consumer;

    CommandSender(Producer<byte[], byte[]> producer, LocalClients clients, String clientSuffix) {
        this.producer = producer;
        this.consumer = clients.consumer(clientSuffix, true);
        this.consumer.assign(List.of(COMMANDS));
    }

    /** Sends a command and waits for its result; a controller that does not answer in time yields a failed result. */
    CommandResult send(CommandOp op, String mirror, List<String> topics, long timeoutMs) throws Exception {
        return send(op, mirror, topics, List.of(), timeoutMs);
    }

    /** {@link #send(CommandOp, String, List, long)} of a command that carries held changes (HOLD_CHANGES). */
    CommandResult send(CommandOp op, String mirror, List<String> topics, List<HeldChange> heldChanges, long timeoutMs) throws Exception {
        long deadline = System.currentTimeMillis() + timeoutMs;
        MirrorCommand command = new MirrorCommand(UUID.randomUUID().toString(), op, mirror, Map.of(), topics, List.of(),
            System.currentTimeMillis(), false, List.of(), heldChanges);
        byte[] key = RecordCodec.encodeKey(command.commandId());
        long offset = producer.send(new ProducerRecord<>(COMMANDS.topic(), COMMANDS.partition(), key, RecordCodec.encodeCommand(command)))
            .get(timeoutMs, TimeUnit.MILLISECONDS).offset();
        consumer.seek(COMMANDS, offset);
        while (System.currentTimeMillis() < deadline) {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                if (r.key() == null || !Arrays.equals(r.key(), key) || r.value() == null) {
                    continue;
                }
                CommandLogEntry entry;
                try {
                    entry = RecordCodec.decodeCommand(r.value());
                } catch (IllegalArgumentException e) {
                    continue;
                }
                if (entry instanceof CommandResult result) {
                    return result;
                }
            }
        }
        return CommandResult.failed(command.commandId(), MirrorError.MIRROR_CONTROLLER_UNAVAILABLE,
            "no answer from the mirror controller within " + timeoutMs + " ms; the command stays queued");
    }

    void wakeup() {
        consumer.wakeup();
    }

    @Override
    public void close() {
        consumer.close(Duration.ZERO);
    }
}
