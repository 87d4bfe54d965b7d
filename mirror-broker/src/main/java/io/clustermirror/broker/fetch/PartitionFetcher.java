package io.clustermirror.broker.fetch;

import io.clustermirror.common.records.HeldDecision;
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
     * @param logStart              the destination's log start and the source's log start moves it holds back
     */
    void addPartition(TopicPartition partition, Uuid expectedSourceTopicId, long fetchOffset, int destLeaderEpoch, int lastFetchedEpoch,
                      DestinationLogStart logStart);

    /**
     * Starts mirroring a partition again past source records {@code [fromOffset, toOffset)} that the source deleted before
     * they were mirrored: counts them in the metrics and fetches from {@code toOffset}; the destination's log start
     * follows the source's once the destination has replicated that far (at once where the destination held nothing
     * between its log start and {@code fromOffset}; otherwise as any move of the source's log start).
     */
    void addPartitionPastLostRecords(TopicPartition partition, Uuid expectedSourceTopicId, long fromOffset, long toOffset,
                                     int destLeaderEpoch, DestinationLogStart logStart);

    /**
     * The operator decided on the source log start moves the partition holds back ({@link HeldDecision}); its fetcher
     * applies the decision with its next response. Nothing happens for a partition that is not fetched: the decision
     * comes again with {@link DestinationLogStart} when it is added.
     */
    void decideHeldLogStarts(TopicPartition partition, HeldDecision decision);

    /** Stops mirroring a partition; returns once no append for it is in flight or will start. */
    void removePartition(TopicPartition partition);

    @Override
    void close();
}
