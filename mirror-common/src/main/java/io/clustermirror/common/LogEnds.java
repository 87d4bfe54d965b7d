package io.clustermirror.common;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;

/**
 * The end offsets of some partitions as one consumer saw them at one moment. For a read_committed consumer these are
 * the last stable offsets: everything committed at that moment lies below them.
 *
 * <p>Invariant: once a consumer's position in every partition has reached its end here, it has returned every record
 * below those ends (a read_committed position also moves over transaction markers and aborted records, which it never
 * returns, so positions are compared, not the offsets of returned records). This is the one way the extension and its
 * clients tell that they have read "everything up to now" of a log: the one-shot reads up to the ends at the call, the
 * controller's loads on activation and the image tailer's read barriers.
 */
public final class LogEnds {
    /** Upper bound of one poll while reading to the ends: only a new position check sees a read_committed position move. */
    public static final long MAX_POLL_MS = 200;
    /** No partition: reached by any consumer. */
    public static final LogEnds NONE = new LogEnds(Map.of());
    /**
     * Upper bound of one blocking call while reading to the ends (the consumer's default API timeout): without a deadline,
     * a partition without a leader fails the read with a {@link org.apache.kafka.common.errors.TimeoutException} rather
     * than blocking it forever.
     */
    private static final long MAX_BLOCK_MS = 60_000;

    private final Map<TopicPartition, Long> ends;

    private LogEnds(Map<TopicPartition, Long> ends) {
        this.ends = Map.copyOf(ends);
    }

    /** The ends of the partitions now, as the consumer's isolation level sees them. */
    public static LogEnds capture(Consumer<?, ?> consumer, Collection<TopicPartition> partitions, Duration timeout) {
        return new LogEnds(consumer.endOffsets(partitions, timeout));
    }

    /** True once the consumer's position in every partition is at or past its end here. */
    public boolean reachedBy(Consumer<?, ?> consumer, Duration timeout) {
        return ends.entrySet().stream().allMatch(e -> consumer.position(e.getKey(), timeout) >= e.getValue());
    }

    /**
     * Assigns the partitions to the consumer and reads each from its beginning up to its end at the call, handing every
     * record to {@code sink} in partition order. A {@link Consumer#wakeup()} ends it with a
     * {@link org.apache.kafka.common.errors.WakeupException}.
     *
     * @param deadlineMs when to give up, by {@code time}'s clock; {@link Long#MAX_VALUE} for never
     * @return false if the deadline passed before every partition was read to its end
     */
    public static boolean readFromBeginning(Consumer<byte[], byte[]> consumer, Collection<TopicPartition> partitions, Time time,
                                            long deadlineMs, java.util.function.Consumer<ConsumerRecord<byte[], byte[]>> sink) {
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
        Map<TopicPartition, Long> unread = new HashMap<>(capture(consumer, partitions, remaining(time, deadlineMs)).ends);
        while (true) {
            unread.entrySet().removeIf(end -> consumer.position(end.getKey(), remaining(time, deadlineMs)) >= end.getValue());
            if (unread.isEmpty()) {
                return true;
            }
            long remainingMs = deadlineMs - time.milliseconds();
            if (remainingMs <= 0) {
                return false;
            }
            consumer.poll(Duration.ofMillis(Math.min(remainingMs, MAX_POLL_MS))).forEach(sink);
        }
    }

    private static Duration remaining(Time time, long deadlineMs) {
        return Duration.ofMillis(Math.max(0, Math.min(MAX_BLOCK_MS, deadlineMs - time.milliseconds())));
    }

    @Override
    public String toString() {
        return ends.toString();
    }
}
