package io.clustermirror.admin.internals;

import io.clustermirror.common.records.CommandLogEntry;
import io.clustermirror.common.records.CommandResult;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.utils.Time;

import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.function.Function;

/**
 * The client side's wait for a command's result, bounded by a deadline. It takes the consumer as a parameter so
 * that it can be tested without a cluster. (Reads to the current ends go through {@link io.clustermirror.common.LogEnds}.)
 */
public final class ControlPlaneReader {
    /**
     * Upper bound of one poll. Polls stay short because a read_committed position can advance over control
     * records and aborted data without any record being returned, and only a new check sees it.
     */
    static final long MAX_POLL_MS = io.clustermirror.common.LogEnds.MAX_POLL_MS;

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

    private static Duration pollTimeout(long remainingMs) {
        return Duration.ofMillis(Math.min(remainingMs, MAX_POLL_MS));
    }
}
