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
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Sends commands to the MirrorController the way the admin client does: a {@link MirrorCommand} in
 * {@code __mirror_commands}, then the controller's {@link CommandResult} for it, read from the command's offset
 * on. One per sync task, used on its scheduler's thread (the consumer is not thread-safe); the producer is shared.
 *
 * <p>The answer is read in scheduled attempts of one {@link #ONE_POLL} poll each, so that the wait is the scheduler's
 * (it stops at once when the task closes) and its deadline is on the scheduler's clock.
 */
final class CommandSender implements MirrorCommands, AutoCloseable {
    private static final TopicPartition COMMANDS = new TopicPartition(InternalTopics.COMMANDS, 0);
    private static final Duration ONE_POLL = Duration.ofMillis(200);

    private final Producer<byte[], byte[]> producer;
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final SyncScheduler scheduler;

    CommandSender(Producer<byte[], byte[]> producer, LocalClients clients, String clientSuffix, SyncScheduler scheduler) {
        this.producer = producer;
        this.scheduler = scheduler;
        this.consumer = clients.consumer(clientSuffix, true);
        this.consumer.assign(List.of(COMMANDS));
    }

    @Override
    public CompletableFuture<CommandResult> send(CommandOp op, String mirror, List<String> topics, List<HeldChange> heldChanges,
                                                 long timeoutMs) {
        long sentMs = scheduler.time().milliseconds();
        MirrorCommand command = new MirrorCommand(UUID.randomUUID().toString(), op, mirror, Map.of(), topics, List.of(),
            sentMs, false, List.of(), heldChanges);
        byte[] key = RecordCodec.encodeKey(command.commandId());
        long offset;
        try {
            offset = producer.send(new ProducerRecord<>(COMMANDS.topic(), COMMANDS.partition(), key, RecordCodec.encodeCommand(command)))
                .get(timeoutMs, TimeUnit.MILLISECONDS).offset();
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
        consumer.seek(COMMANDS, offset);
        // The timeout counts from the send, as the admin client's does.
        long leftMs = Math.max(0, sentMs + timeoutMs - scheduler.time().milliseconds());
        return scheduler.retry(() -> pollResult(key), 0, leftMs).thenApply(answer -> answer.orElseGet(() ->
            CommandResult.failed(command.commandId(), MirrorError.MIRROR_CONTROLLER_UNAVAILABLE,
                "no answer from the mirror controller within " + timeoutMs + " ms; the command stays queued")));
    }

    /** The controller's result for the command with this key, if one poll brings it. */
    private Optional<CommandResult> pollResult(byte[] key) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(ONE_POLL)) {
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
                return Optional.of(result);
            }
        }
        return Optional.empty();
    }

    void wakeup() {
        consumer.wakeup();
    }

    @Override
    public void close() {
        consumer.close(Duration.ZERO);
    }
}
