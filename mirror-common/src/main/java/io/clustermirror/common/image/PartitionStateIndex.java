package io.clustermirror.common.image;

import io.clustermirror.common.PartitionState;
import io.clustermirror.common.records.PartitionStateRecord;
import org.pcollections.HashTreePMap;
import org.pcollections.PMap;
import org.pcollections.PSortedMap;
import org.pcollections.TreePMap;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The partition states of a {@link MirrorImage}: the last record of each {@code __mirror_state} log key, and what is
 * derived from them (each partition's state, each partition's log keys, each mirror topic's states in partition order).
 *
 * <p>Immutable, and persistent: {@link #with} builds the next index from this one and the changed log keys alone, in
 * maps that share every unchanged entry with this index's (a change costs a logarithmic number of new nodes, not a
 * copy). A start of 50,000 partitions writes over a hundred thousand state records and every broker builds an image per
 * batch it reads: copying each map per image made those images most of a broker's allocations, and their garbage
 * most of its CPU (collections of a full heap), during such a start.
 *
 * <p>Invariant: every index equals the one derived from its {@link #stateLog()} alone, however it was reached (in one
 * step, or change by change): a partition's state is its record with the highest {@link #PRECEDENCE}, its log keys are
 * sorted, and a topic's states are sorted by partition with the count of STOPPED ones.
 */
final class PartitionStateIndex {
    static final PartitionStateIndex EMPTY = new PartitionStateIndex(HashTreePMap.empty(), HashTreePMap.empty(),
        HashTreePMap.empty(), HashTreePMap.empty());

    /** Orders the records of one partition: the highest leader epoch wins (ties, only with foreign log keys: latest write). */
    static final Comparator<PartitionStateRecord> PRECEDENCE =
        Comparator.comparingInt(PartitionStateRecord::leaderEpoch).thenComparingLong(PartitionStateRecord::updatedMs);

    /** A mirror topic, the key of its partitions' states. */
    record MirrorTopic(String mirror, String topic) {
        static MirrorTopic of(PartitionStateRecord record) {
            return new MirrorTopic(record.mirror(), record.topic());
        }
    }

    /** One mirror topic's partition states, by partition, and how many of them are STOPPED. */
    record TopicStates(PSortedMap<Integer, PartitionStateRecord> byPartition, long stopped) {
        static final TopicStates EMPTY = new TopicStates(TreePMap.empty(), 0L);

        /** The states in partition order (a view: nothing is copied). */
        Collection<PartitionStateRecord> states() {
            return byPartition.values();
        }

        /** These states with the partition's state replaced by {@code now}, or removed if null. */
        TopicStates with(int partition, PartitionStateRecord now) {
            PartitionStateRecord before = byPartition.get(partition);
            return new TopicStates(now == null ? byPartition.minus(partition) : byPartition.plus(partition, now),
                stopped - stoppedCount(before) + stoppedCount(now));
        }

        private static long stoppedCount(PartitionStateRecord state) {
            return state != null && state.state() == PartitionState.STOPPED ? 1L : 0L;
        }
    }

    private final PMap<String, PartitionStateRecord> stateLog;
    private final PMap<String, PartitionStateRecord> partitionStates;
    private final PMap<String, List<String>> logKeysByPartition;
    private final PMap<MirrorTopic, TopicStates> statesByTopic;

    private PartitionStateIndex(PMap<String, PartitionStateRecord> stateLog, PMap<String, PartitionStateRecord> partitionStates,
                                PMap<String, List<String>> logKeysByPartition, PMap<MirrorTopic, TopicStates> statesByTopic) {
        this.stateLog = stateLog;
        this.partitionStates = partitionStates;
        this.logKeysByPartition = logKeysByPartition;
        this.statesByTopic = statesByTopic;
    }

    /** The index of these records, by log key. */
    static PartitionStateIndex of(Map<String, PartitionStateRecord> stateLog) {
        return EMPTY.with(stateLog);
    }

    /**
     * This index with {@code changes} applied: by log key, the new last record, or null for a tombstone (a log key it
     * does not hold is ignored).
     */
    PartitionStateIndex with(Map<String, PartitionStateRecord> changes) {
        if (changes.isEmpty()) {
            return this;
        }
        Next next = new Next(this);
        Set<String> touched = new HashSet<>();
        changes.forEach((logKey, record) -> {
            String partitionKey = next.replace(logKey, record);
            if (partitionKey != null) {
                touched.add(partitionKey);
            }
        });
        touched.forEach(next::deriveState);
        return new PartitionStateIndex(next.log, next.states, next.keys, next.topics);
    }

    /** The next index's maps while {@link #with} builds them, each starting as this index's. */
    private static final class Next {
        private final PartitionStateIndex base;
        private PMap<String, PartitionStateRecord> log;
        private PMap<String, List<String>> keys;
        private PMap<String, PartitionStateRecord> states;
        private PMap<MirrorTopic, TopicStates> topics;

        Next(PartitionStateIndex base) {
            this.base = base;
            this.log = base.stateLog;
            this.keys = base.logKeysByPartition;
            this.states = base.partitionStates;
            this.topics = base.statesByTopic;
        }

        /**
         * Puts {@code record} under {@code logKey} (null removes it) and keeps the partition's log keys in line; returns the
         * partition key it touched, or null.
         */
        String replace(String logKey, PartitionStateRecord record) {
            PartitionStateRecord before = log.get(logKey);
            if (before == null && record == null) {
                return null;
            }
            log = record == null ? log.minus(logKey) : log.plus(logKey, record);
            String partitionKey = before != null ? before.key() : record.key();
            if (before == null || record == null) { // a log key added or removed: the partition's keys change
                List<String> now = new ArrayList<>(keys.getOrDefault(partitionKey, List.of()));
                if (record == null) {
                    now.remove(logKey);
                } else {
                    now.add(logKey);
                    now.sort(null);
                }
                keys = now.isEmpty() ? keys.minus(partitionKey) : keys.plus(partitionKey, List.copyOf(now));
            }
            return partitionKey;
        }

        /** Derives a touched partition's state from its log keys, and its topic's states with it. */
        void deriveState(String partitionKey) {
            PartitionStateRecord before = base.partitionStates.get(partitionKey);
            PartitionStateRecord now = keys.getOrDefault(partitionKey, List.of()).stream().map(log::get).max(PRECEDENCE).orElse(null);
            if (now == before) { // the same record object: the partition's state did not change
                return;
            }
            states = now == null ? states.minus(partitionKey) : states.plus(partitionKey, now);
            PartitionStateRecord any = now != null ? now : before;
            MirrorTopic topic = MirrorTopic.of(any);
            TopicStates next = topics.getOrDefault(topic, TopicStates.EMPTY).with(any.partition(), now);
            topics = next.byPartition().isEmpty() ? topics.minus(topic) : topics.plus(topic, next);
        }
    }

    /** The last record of each log key, by log key (unmodifiable). */
    Map<String, PartitionStateRecord> stateLog() {
        return stateLog;
    }

    /** Each partition's state, by {@link PartitionStateRecord#key()} (unmodifiable). */
    Map<String, PartitionStateRecord> partitionStates() {
        return partitionStates;
    }

    /** The sorted log keys of a partition's records. */
    List<String> logKeysOf(String partitionKey) {
        return logKeysByPartition.getOrDefault(partitionKey, List.of());
    }

    /** A mirror topic's states, null if none of its partitions has one. */
    TopicStates statesOf(String mirror, String topic) {
        return statesByTopic.get(new MirrorTopic(mirror, topic));
    }
}
