package io.clustermirror.broker.bridge;

import io.clustermirror.common.batch.StoredBatch;
import org.apache.kafka.common.TopicPartition;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The operations on this broker's local leader replicas that the multi-step procedures on a leader's log use
 * (alignment, stop): reading the log and its followers' positions, truncating, appending, cleaning producer state.
 * {@link BrokerHandle} implements it on a running broker; the procedures are tested against an in-memory one.
 *
 * <p>Every method may be called from any thread. A method taking a leader epoch acts only while this broker leads the
 * partition at that epoch and throws {@link NotLeaderException} otherwise, so a deposed leader's step is fenced.
 */
public interface LeaderLogs {
    int nodeId();

    /** The local log's state if this broker is the partition's leader. */
    Optional<LeaderLogState> leaderLogState(TopicPartition partition);

    /** The end offset of leader epoch {@code epoch} in the local log (Kafka's epoch cache), if the log knows the epoch. */
    java.util.OptionalLong endOffsetForEpoch(TopicPartition partition, int epoch);

    /** A copy of the local replica's whole batches from the batch containing {@code startOffset}, about {@code maxBytes}. */
    List<StoredBatch> localRecords(TopicPartition partition, long startOffset, int maxBytes);

    /** Appends whole batches (the bytes from the buffer's position to its limit) as the leader at {@code leaderEpoch}, keeping their offsets. */
    AppendResult appendAsLeader(TopicPartition partition, int leaderEpoch, ByteBuffer records) throws NotLeaderException;

    /** Truncates the leader's log to {@code offset} (the first offset removed). */
    void truncateLeaderTo(TopicPartition partition, int leaderEpoch, long offset) throws NotLeaderException;

    /** The log end offsets of the in-sync followers as the leader last saw them (its own replica excluded). */
    Map<Integer, Long> inSyncFollowerLogEndOffsets(TopicPartition partition, int leaderEpoch) throws NotLeaderException;

    /** The partition's replica assignment as its leader at {@code leaderEpoch} knows it. */
    ReplicaAssignment replicaAssignment(TopicPartition partition, int leaderEpoch) throws NotLeaderException;

    /**
     * The first offset of each producer's open transaction in the leader's producer state, by producer id: the
     * transactions a read_committed consumer does not see past yet. After a truncation, the ones that began below it.
     */
    Map<Long, Long> openTransactionStarts(TopicPartition partition, int leaderEpoch) throws NotLeaderException;

    /** Removes the producers whose last write precedes {@code barrierOffset} from the local replica's producer state. */
    int removeProducersBefore(TopicPartition partition, long barrierOffset);
}
