package io.clustermirror.broker.fetch;

import io.clustermirror.broker.bridge.AppendResult;
import io.clustermirror.broker.bridge.NotLeaderException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.MemoryRecords;

/** Where fetched source batches go: the destination leader's log. */
@FunctionalInterface
public interface PartitionAppender {
    /**
     * Appends whole, CRC-checked source batches at their own offsets.
     *
     * @param destLeaderEpoch the destination leader epoch the partition was added with
     */
    AppendResult append(TopicPartition partition, int destLeaderEpoch, MemoryRecords batches) throws NotLeaderException;
}
