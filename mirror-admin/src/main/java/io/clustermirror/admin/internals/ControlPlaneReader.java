package io.clustermirror.admin.internals;

import io.clustermirror.common.records.CommandLogEntry;
import io.clustermirror.common.records.CommandResult;
import io.clustermirror.common.records.ControllerProblem;
import io.clustermirror.common.records.RecordCodec;

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
     * Problem reports after the command, with no result between them, that end the wait: one failed attempt may be a
     * moment of a restart that the next attempt gets over; the controller attempts again within seconds.
     */
    static final int PROBLEMS_TO_GIVE_UP = 2;

    /**
     * Polls the consumer, positioned at a command's own record in {@code __mirror_commands}, until the controller's
     * result for that command, or until a controller has reported {@value #PROBLEMS_TO_GIVE_UP} times after it that it
     * cannot work ({@link ControllerProblem}): then no result comes soon, and the caller can say why at once instead of
     * at the deadline. Only records with the command's key or the problem key are decoded; the command itself and other
     * clients' records are skipped.
     *
     * @param commandKey the record key of the command (its encoded command id)
     * @return the result or the problem, or empty if the deadline passed first
     */
    public Optional<CommandLogEntry> awaitAnswer(Consumer<byte[], byte[]> consumer, byte[] commandKey, long deadlineMs) {
        byte[] problemKey = RecordCodec.encodeKey(RecordCodec.CONTROLLER_PROBLEM_KEY);
        int problems = 0;
        while (true) {
            long remainingMs = deadlineMs - time.milliseconds();
            if (remainingMs <= 0) {
                return Optional.empty();
            }
            for (ConsumerRecord<byte[], byte[]> record : consumer.poll(pollTimeout(remainingMs))) {
                if (record.value() == null) {
                    continue;
                }
                if (Arrays.equals(record.key(), commandKey) && commandDecoder.apply(record.value()) instanceof CommandResult result) {
                    return Optional.of(result);
                }
                if (Arrays.equals(record.key(), problemKey) && commandDecoder.apply(record.value()) instanceof ControllerProblem problem
                        && ++problems == PROBLEMS_TO_GIVE_UP) {
                    return Optional.of(problem);
                }
            }
        }
    }

    private static Duration pollTimeout(long remainingMs) {
        return Duration.ofMillis(Math.min(remainingMs, MAX_POLL_MS));
    }
}
