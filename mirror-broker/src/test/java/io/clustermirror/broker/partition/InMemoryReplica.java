package io.clustermirror.broker.partition;

import io.clustermirror.broker.TestBatches;
import io.clustermirror.broker.bridge.AppendResult;
import io.clustermirror.broker.bridge.LeaderLogState;
import io.clustermirror.broker.bridge.LocalReplicas;
import io.clustermirror.common.barrier.BarrierBatch;
import io.clustermirror.broker.bridge.NotLeaderException;
import io.clustermirror.broker.bridge.ReplicaAssignment;
import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.batch.StoredBatches;
import org.apache.kafka.common.TopicPartition;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;

/**
 * One local replica in memory, batch by batch: the leader (for the procedures on a leader's log) or, with {@link #leader}
 * false, a follower. A leader's in-sync followers either replicate at once (they hold the leader's log end, and the high
 * watermark is the log end) or not at all.
 */
final class InMemoryReplica implements LocalReplicas {
    final TopicPartition tp;
    final int nodeId;
    int leaderEpoch;
    boolean leader = true;
    /** The in-sync followers hold the leader's log end (else they stay where {@link #followerEnds} says). */
    boolean replicating = true;
    /** The last stable offset while it is below the log end (an open transaction); -1 when everything is stable. */
    long lastStableOffset = -1;
    final List<Integer> replicas = new ArrayList<>();
    final Map<Integer, Long> followerEnds = new TreeMap<>();
    final List<StoredBatch> batches = new ArrayList<>();
    final List<String> changes = new ArrayList<>();

    InMemoryReplica(TopicPartition tp, int nodeId, int leaderEpoch) {
        this.tp = tp;
        this.nodeId = nodeId;
        this.leaderEpoch = leaderEpoch;
        replicas.add(nodeId);
    }

    /** Appends {@code n} records at the log end, written at {@code epoch}. */
    InMemoryReplica withRecords(int n, int epoch) {
        batches.add(TestBatches.stored(logEnd(), n, 1000L, (short) 0, (int) logEnd(), epoch));
        return this;
    }

    long logEnd() {
        return batches.isEmpty() ? 0 : lastBatch().nextOffset();
    }

    StoredBatch lastBatch() {
        return batches.get(batches.size() - 1);
    }

    @Override
    public int nodeId() {
        return nodeId;
    }

    @Override
    public Optional<LeaderLogState> leaderLogState(TopicPartition partition) {
        if (!leader) {
            return Optional.empty();
        }
        long end = logEnd();
        long hw = replicating ? end : followerEnds.values().stream().mapToLong(Long::longValue).min().orElse(end);
        long lso = lastStableOffset < 0 ? end : Math.min(lastStableOffset, end);
        return Optional.of(new LeaderLogState(leaderEpoch, 0, end, Math.min(hw, end), lso));
    }

    /** Where {@code epoch} ends: the first offset written at a later epoch, or the log end; empty if only later epochs wrote. */
    @Override
    public OptionalLong endOffsetForEpoch(TopicPartition partition, int epoch) {
        if (batches.isEmpty() || batches.get(0).partitionLeaderEpoch() > epoch) {
            return OptionalLong.empty();
        }
        return OptionalLong.of(batches.stream().filter(b -> b.partitionLeaderEpoch() > epoch)
            .mapToLong(StoredBatch::baseOffset).findFirst().orElse(logEnd()));
    }

    @Override
    public List<StoredBatch> localRecords(TopicPartition partition, long startOffset, int maxBytes) {
        return batches.stream().filter(b -> b.lastOffset() >= startOffset).toList();
    }

    @Override
    public AppendResult appendAsLeader(TopicPartition partition, int epoch, ByteBuffer records) throws NotLeaderException {
        checkLeader(epoch);
        List<StoredBatch> appended = StoredBatches.of(TestBatches.concat(records)); // a copy, as a broker's log keeps
        StoredBatch first = appended.get(0);
        changes.add("append " + first.baseOffset());
        batches.addAll(appended);
        return new AppendResult(first.baseOffset(), lastBatch().lastOffset(), logEnd());
    }

    @Override
    public void truncateLeaderTo(TopicPartition partition, int epoch, long offset) throws NotLeaderException {
        checkLeader(epoch);
        changes.add("truncate " + offset);
        batches.removeIf(b -> b.baseOffset() >= offset);
    }

    @Override
    public Map<Integer, Long> inSyncFollowerLogEndOffsets(TopicPartition partition, int epoch) throws NotLeaderException {
        checkLeader(epoch);
        Map<Integer, Long> ends = new TreeMap<>();
        followerEnds.forEach((id, end) -> ends.put(id, replicating ? logEnd() : end));
        return ends;
    }

    @Override
    public ReplicaAssignment replicaAssignment(TopicPartition partition, int epoch) throws NotLeaderException {
        checkLeader(epoch);
        return new ReplicaAssignment(List.copyOf(replicas), false);
    }

    /**
     * Kafka's producer state reduced to open transactions: a transactional data batch opens its producer's transaction
     * (if none is open), a transaction marker closes it, and the barrier clears them all (as the stop's reset does).
     */
    @Override
    public Map<Long, Long> openTransactionStarts(TopicPartition partition, int epoch) throws NotLeaderException {
        checkLeader(epoch);
        Map<Long, Long> open = new TreeMap<>();
        for (StoredBatch b : batches) {
            if (BarrierBatch.isBarrier(b)) {
                open.clear();
            } else if (b.isTransactional() && b.isControlBatch()) {
                open.remove(b.producerId());
            } else if (b.isTransactional()) {
                open.putIfAbsent(b.producerId(), b.baseOffset());
            }
        }
        return open;
    }

    @Override
    public int removeProducersBefore(TopicPartition partition, long barrierOffset) {
        changes.add("remove producers before " + barrierOffset);
        return 1;
    }

    @Override
    public OptionalLong localLogEndOffset(TopicPartition partition) {
        return OptionalLong.of(logEnd());
    }

    @Override
    public Optional<Boolean> holdsBarrierAt(TopicPartition partition, long offset) {
        if (offset >= logEnd()) {
            return Optional.empty();
        }
        return Optional.of(batches.stream()
            .anyMatch(b -> b.baseOffset() == offset && BarrierBatch.isBarrier(b)));
    }

    @Override
    public boolean truncateFollowerTo(TopicPartition partition, long offset) {
        if (leader) {
            return false;
        }
        changes.add("truncate follower " + offset);
        batches.removeIf(b -> b.baseOffset() >= offset);
        return true;
    }

    private void checkLeader(int epoch) throws NotLeaderException {
        if (!leader || epoch != leaderEpoch) {
            throw new NotLeaderException("not the leader of " + tp + " at epoch " + epoch);
        }
    }
}
