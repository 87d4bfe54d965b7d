package io.clustermirror.broker.fetch;

import io.clustermirror.broker.bridge.AppendResult;
import io.clustermirror.broker.bridge.NotLeaderException;
import org.apache.kafka.common.TopicPartition;

import java.nio.ByteBuffer;

/** Where fetched source data goes: the destination leader's log. */
public interface PartitionAppender {
    /**
     * Appends whole, CRC-checked source batches at their own offsets.
     *
     * @param destLeaderEpoch the destination leader epoch the partition was added with
     */
    AppendResult append(TopicPartition partition, int destLeaderEpoch, ByteBuffer batches) throws NotLeaderException;

    /**
     * Moves the destination log start up to the source's, so records the source deleted (retention,
     * deleteRecords) are not readable on the destination either.
     *
     * @return false if it cannot be done yet (the destination high watermark is below {@code sourceLogStartOffset})
     */
    boolean advanceLogStartOffset(TopicPartition partition, int destLeaderEpoch, long sourceLogStartOffset)
        throws NotLeaderException;

    /**
     * Starts the destination log at the source's log start when the source holds no record at or past it (all its
     * records deleted) and the destination holds none: its offsets are then the source's before any record arrives.
     *
     * @return false if the destination holds records below {@code sourceLogStartOffset}
     */
    boolean startEmptyLogAt(TopicPartition partition, int destLeaderEpoch, long sourceLogStartOffset) throws NotLeaderException;

    /**
     * A MIRROR_PID_RESET barrier from the source was just appended at {@code barrierOffset}: the producers that
     * wrote before it are gone from the source's point of view and must not fence the producers after it.
     */
    void removeProducersBefore(TopicPartition partition, int destLeaderEpoch, long barrierOffset) throws NotLeaderException;
}
