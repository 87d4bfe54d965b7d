package io.clustermirror.common.image;

import io.clustermirror.common.PartitionState;
import io.clustermirror.common.records.PartitionStateRecord;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * The partition states of a {@link MirrorImage}: the last record of each {@code __mirror_state} log key, and what is
 * derived from them (each partition's state, each partition's log keys, each mirror topic's states in partition order).
 *
 * <p>Immutable. {@link #with} builds the next index from this one and the changed log keys alone: it copies the maps
 * (a pointer per entry) but derives again only the partitions and topics the changes touch. A start of 10,000 partitions
 * writes tens of thousands of state records and every broker builds an image per batch it reads, so deriving every
 * partition again per image (a grouping and a sort of everything) made the image tailer one of the busiest threads of
 * a broker during such a start.
 *
 * <p>Invariant: every index equals the one derived from its {@link #stateLog()} alone, however it was reached (in one
 * step, or change by change): a partition's state is its record with the highest {@link #PRECEDENCE}, its log keys are
 * sorted, and a topic's states are sorted by partition with the count of STOPPED ones.
 */
final class PartitionStateIndex {
    static final PartitionStateIndex EMPTY = new PartitionStateIndex(Map.of(), Map.of(), Map.of(), Map.of());

    /** Orders the records of one partition: the highest leader epoch wins (ties, only with foreign log keys: latest write). */
    static final Comparator<PartitionStateRecord> PRECEDENCE =
        Comparator.comparingInt(PartitionStateRecord::leaderEpoch).thenComparingLong(PartitionStateRecord::updatedMs);

    /** A mirror topic, the key of its partitions' states. */
    record MirrorTopic(String mirror, String topic) {
        static MirrorTopic of(PartitionStateRecord record) {
            return new MirrorTopic(record.mirror(), record.topic());
        }
    }

    /** One mirror topic's partition states, sorted by partition, and how many of them are STOPPED. */
    record TopicStates(List<PartitionStateRecord> states, long stopped) {
        static TopicStates of(List<PartitionStateRecord> sorted) {
            return new TopicStates(Collections.unmodifiableList(sorted),
                sorted.stream().filter(s -> s.state() == PartitionState.STOPPED).count());
        }
    }

    private final Map<String, PartitionStateRecord> stateLog;
    private final Map<String, PartitionStateRecord> partitionStates;
    private final Map<String, List<String>> logKeysByPartition;
    private final Map<MirrorTopic, TopicStates> statesByTopic;

    /** Takes the maps as they are: the caller made them for this index alone. */
    private PartitionStateIndex(Map<String, PartitionStateRecord> stateLog, Map<String, PartitionStateRecord> partitionStates,
                                Map<String, List<String>> logKeysByPartition, Map<MirrorTopic, TopicStates> statesByTopic) {
        this.stateLog = Collections.unmodifiableMap(stateLog);
        this.partitionStates = Collections.unmodifiableMap(partitionStates);
        this.logKeysByPartition = Collections.unmodifiableMap(logKeysByPartition);
        this.statesByTopic = Collections.unmodifiableMap(statesByTopic);
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
        Map<String, PartitionStateRecord> log = new HashMap<>(stateLog);
        Map<String, List<String>> keys = new HashMap<>(logKeysByPartition);
        Set<String> touched = new HashSet<>();
        changes.forEach((logKey, record) -> replace(log, keys, logKey, record).ifPresent(touched::add));
        Map<String, PartitionStateRecord> states = new HashMap<>(partitionStates);
        // By topic, by partition: each touched partition's new state, or empty where none is left.
        Map<MirrorTopic, TreeMap<Integer, Optional<PartitionStateRecord>>> topicChanges = new HashMap<>();
        for (String partitionKey : touched) {
            PartitionStateRecord before = partitionStates.get(partitionKey);
            PartitionStateRecord now = keys.getOrDefault(partitionKey, List.of()).stream().map(log::get).max(PRECEDENCE).orElse(null);
            putOrRemove(states, partitionKey, now);
            PartitionStateRecord any = now != null ? now : before;
            if (any != null && now != before) { // the same record object: the partition's state did not change
                topicChanges.computeIfAbsent(MirrorTopic.of(any), t -> new TreeMap<>()).put(any.partition(), Optional.ofNullable(now));
            }
        }
        Map<MirrorTopic, TopicStates> topics = new HashMap<>(statesByTopic);
        topicChanges.forEach((topic, changed) -> {
            TopicStates before = statesByTopic.get(topic);
            List<PartitionStateRecord> merged = merge(before == null ? List.of() : before.states(), changed);
            putOrRemove(topics, topic, merged.isEmpty() ? null : TopicStates.of(merged));
        });
        return new PartitionStateIndex(log, states, keys, topics);
    }

    /**
     * Puts {@code record} under {@code logKey} in {@code log} (null removes it) and keeps {@code keys} in line; returns the
     * partition key it touched, if any.
     */
    private static Optional<String> replace(Map<String, PartitionStateRecord> log, Map<String, List<String>> keys, String logKey,
                                            PartitionStateRecord record) {
        PartitionStateRecord before = record == null ? log.remove(logKey) : log.put(logKey, record);
        if (before == null && record == null) {
            return Optional.empty();
        }
        String partitionKey = before != null ? before.key() : record.key();
        if (before == null || record == null) { // a log key added or removed: the partition's keys change
            List<String> now = new ArrayList<>(keys.getOrDefault(partitionKey, List.of()));
            if (record == null) {
                now.remove(logKey);
            } else {
                now.add(logKey);
                now.sort(null);
            }
            putOrRemove(keys, partitionKey, now.isEmpty() ? null : List.copyOf(now));
        }
        return Optional.of(partitionKey);
    }

    /** The states of one topic, sorted by partition, with {@code changed} (sorted by partition; empty removes) merged in. */
    private static List<PartitionStateRecord> merge(List<PartitionStateRecord> sorted, TreeMap<Integer, Optional<PartitionStateRecord>> changed) {
        List<PartitionStateRecord> out = new ArrayList<>(sorted.size() + changed.size());
        int i = 0;
        for (Map.Entry<Integer, Optional<PartitionStateRecord>> change : changed.entrySet()) {
            while (i < sorted.size() && sorted.get(i).partition() < change.getKey()) {
                out.add(sorted.get(i++));
            }
            if (i < sorted.size() && sorted.get(i).partition() == change.getKey()) {
                i++; // replaced or removed
            }
            change.getValue().ifPresent(out::add);
        }
        out.addAll(sorted.subList(i, sorted.size()));
        return out;
    }

    private static <K, V> void putOrRemove(Map<K, V> map, K key, V value) {
        if (value == null) {
            map.remove(key);
        } else {
            map.put(key, value);
        }
    }

    /** The last record of each log key, by log key. */
    Map<String, PartitionStateRecord> stateLog() {
        return stateLog;
    }

    /** Each partition's state, by {@link PartitionStateRecord#key()}. */
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
