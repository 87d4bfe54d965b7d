package io.clustermirror.broker.fetch;

import io.clustermirror.common.MirrorConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metrics.Metrics;

/**
 * The data plane of one mirror on one destination broker: discovers the source leaders of the
 * partitions this broker leads, runs one fetcher thread per source broker that sends consumer Fetch
 * requests (replica id -1, fetch sessions, many partitions per request), and hands the raw batches to
 * the {@link PartitionAppender}.
 */
public final class MirrorFetcherManager implements AutoCloseable {
    public MirrorFetcherManager(MirrorConfig config, int localNodeId, PartitionAppender appender,
                                FetchListener listener, Metrics metrics) {
        throw new UnsupportedOperationException("TODO");
    }

    /**
     * Starts mirroring a partition from {@code fetchOffset} (the destination log end).
     *
     * @param expectedSourceTopicId the source topic id recorded at start; any other id fails the partition
     * @param destLeaderEpoch       the destination leader epoch to stamp and append with
     * @param lastFetchedEpoch      source epoch of the last mirrored batch, or -1
     */
    public void addPartition(TopicPartition partition, Uuid expectedSourceTopicId, long fetchOffset,
                             int destLeaderEpoch, int lastFetchedEpoch) {
        throw new UnsupportedOperationException("TODO");
    }

    /** Stops mirroring a partition; returns once no append for it is in flight or will start. */
    public void removePartition(TopicPartition partition) {
        throw new UnsupportedOperationException("TODO");
    }

    @Override
    public void close() {
        throw new UnsupportedOperationException("TODO");
    }
}
