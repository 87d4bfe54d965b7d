package io.clustermirror.common.records;

import io.clustermirror.common.compat.SourceOffsetCommit;
import org.apache.kafka.common.TopicPartition;

/**
 * A consumer group's offset of one of a mirror's partitions, committed on the source inside a transaction that committed
 * ({@code sendOffsetsToTransaction}): a value of {@code __mirror_transactions} (key: the mirror's name, header
 * {@value #KIND_HEADER} = {@value #KIND}). What a consistent stop needs to give such a group the offset of the last
 * transaction it keeps, so that a read-process-write application resumed on the destination neither reads an input again
 * whose output stays nor skips one whose output was cut.
 *
 * @param producerId    the producer whose transaction committed it
 * @param producerEpoch the producer epoch of the commit: its transaction's records carry the same
 * @param logPartition  the partition of the source's {@code __consumer_offsets} that holds the group
 * @param commitOffset  where that partition holds the transaction's commit marker: commits of one group are ordered by it
 * @param committedMs   the marker's time, by the source's clock
 */
public record SourceOffsetCommitRecord(String mirror, String group, String topic, int partition, long offset, long producerId,
                                       short producerEpoch, int logPartition, long commitOffset, long committedMs) {
    /** The header that tells these records from {@link SourceTransactionRecord}s in the same topic. */
    public static final String KIND_HEADER = "kind";
    public static final String KIND = "group-offset";

    /** The record of {@code commit}, made by the transaction of {@code producerId} and {@code producerEpoch}. */
    public static SourceOffsetCommitRecord of(String mirror, SourceOffsetCommit commit, long producerId, short producerEpoch,
                                              int logPartition, long commitOffset, long committedMs) {
        return new SourceOffsetCommitRecord(mirror, commit.group(), commit.topic(), commit.partition(), commit.offset(), producerId,
            producerEpoch, logPartition, commitOffset, committedMs);
    }

    public TopicPartition topicPartition() {
        return new TopicPartition(topic, partition);
    }
}
