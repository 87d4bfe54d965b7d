package io.clustermirror.broker.fetch;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

/** The fetchers of one mirror as the partition manager drives them: {@link MirrorFetcherManager} on a broker. */
public interface PartitionFetcher extends AutoCloseable {
    /**
     * Starts mirroring a partition from {@code fetchOffset} (the destination log end).
     *
     * @param expectedSourceTopicId the source topic id recorded at start; any other id fails the partition
     * @param destLeaderEpoch       the destination leader epoch to stamp and append with
     * @param lastFetchedEpoch      source epoch of the last mirrored batch, or -1
     */
    void addPartition(TopicPartition partition, Uuid expectedSourceTopicId, long fetchOffset, int destLeaderEpoch, int lastFetchedEpoch);

    /** Stops mirroring a partition; returns once no append for it is in flight or will start. */
    void removePartition(TopicPartition partition);

    @Override
    void close();
}
