package io.clustermirror.admin.internals;

import io.clustermirror.common.records.CommandLogEntry;
import io.clustermirror.common.records.CommandResult;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;

import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * The client side's poll loops over the mirror's internal topics, each bounded by a deadline. They take the
 * consumer as a parameter so that they can be tested without a cluster.
 */
public final class ControlPlaneReader {
    /**
     * Upper bound of one poll. Polls stay short because a read_committed position can advance over control
     * records and aborted data without any record being returned, and only a new check sees it.
     */
    static final long MAX_POLL_MS = 200;

    private final Time time;
    private final Function<byte[], CommandLogEntry> commandDecoder;

    /**
     * @param time           the clock deadlines are measured with
     * @param commandDecoder decodes a {@code __mirror_commands} value (production: {@code RecordCodec::decodeCommand})
     */
    public ControlPlaneReader(Time time, Function<byte[], CommandLogEntry> commandDecoder) {
        this.time = time;
        this.commandDecoder = commandDecoder;
    }

    /**
     * Polls the consumer, positioned at a command's own record in {@code __mirror_commands}, until the
     * controller's result for that command. Only records with the command's key are decoded; the command itself
     * and other clients' records are skipped.
     *
     * @param commandKey the record key of the command (its encoded command id)
     * @return the result, or empty if the deadline passed first
     */
    public Optional<CommandResult> awaitResult(Consumer<byte[], byte[]> consumer, byte[] commandKey,
                                               long deadlineMs) {
        while (true) {
            long remainingMs = deadlineMs - time.milliseconds();
            if (remainingMs <= 0) {
                return Optional.empty();
            }
            for (ConsumerRecord<byte[], byte[]> record : consumer.poll(pollTimeout(remainingMs))) {
                if (record.value() != null && Arrays.equals(record.key(), commandKey)
                        && commandDecoder.apply(record.value()) instanceof CommandResult result) {
                    return Optional.of(result);
                }
            }
        }
    }

    /**
     * Assigns the partitions to the consumer and reads each from its beginning up to the end offset it had when
     * the read began, handing every record to {@code sink} in partition order.
     *
     * @return false if the deadline passed before every partition was read to its end
     */
    public boolean readAll(Consumer<byte[], byte[]> consumer, Collection<TopicPartition> partitions,
                           java.util.function.Consumer<ConsumerRecord<byte[], byte[]>> sink, long deadlineMs) {
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
        Map<TopicPartition, Long> unread = new HashMap<>(consumer.endOffsets(partitions, remaining(deadlineMs)));
        while (true) {
            unread.entrySet().removeIf(end -> consumer.position(end.getKey(), remaining(deadlineMs)) >= end.getValue());
            if (unread.isEmpty()) {
                return true;
            }
            long remainingMs = deadlineMs - time.milliseconds();
            if (remainingMs <= 0) {
                return false;
            }
            consumer.poll(pollTimeout(remainingMs)).forEach(sink);
        }
    }

    private Duration remaining(long deadlineMs) {
        return Duration.ofMillis(Math.max(0, deadlineMs - time.milliseconds()));
    }

    private static Duration pollTimeout(long remainingMs) {
        return Duration.ofMillis(Math.min(remainingMs, MAX_POLL_MS));
    }
}
