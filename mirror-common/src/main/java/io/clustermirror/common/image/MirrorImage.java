package io.clustermirror.common.image;

import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.TopicPatterns;
import io.clustermirror.common.records.ControllerPositionRecord;
import io.clustermirror.common.records.MirrorAclRecord;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.SyncedTopicConfigsRecord;

import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * An immutable view of the mirror control plane, built by replaying {@code __mirror_metadata} (desired
 * state) and {@code __mirror_state} (actual per-partition state) through a {@link MirrorDelta}, in the
 * style of Kafka's {@code MetadataImage}. Every broker keeps one; the admin client builds one to list
 * and describe.
 *
 * <p>Partition states are held as {@code __mirror_state} holds them after compaction: the last record of each log
 * key ({@link PartitionStateRecord#logKey()}, one per writer's leader epoch). {@link #partitionStates()} derives from
 * them the state of each partition, the record with the highest leader epoch. Invariant: the derived state is a function
 * of the last record per log key only, so it is the same before and after compaction and on every replay.
 */
public final class MirrorImage {
    public static final MirrorImage EMPTY = new MirrorImage(Map.of(), Map.of(), Map.of(), Map.of(), null);

    private final Map<String, MirrorRecord> mirrors;
    private final Map<String, MirrorTopicRecord> topics;
    private final PartitionStateIndex states;
    private final Map<String, MirrorAclRecord> mirrorAcls;
    private final Set<String> fencedTopics;
    private final ControllerPositionRecord controllerPosition;
    private final Map<String, SyncedTopicConfigsRecord> syncedTopicConfigs;

    public MirrorImage(Map<String, MirrorRecord> mirrors, Map<String, MirrorTopicRecord> topics,
                       Map<String, PartitionStateRecord> partitionStates) {
        this(mirrors, topics, partitionStates, Map.of());
    }

    /** An image whose partition states are the given records (by partition key), each as if written under its log key. */
    public MirrorImage(Map<String, MirrorRecord> mirrors, Map<String, MirrorTopicRecord> topics,
                       Map<String, PartitionStateRecord> partitionStates, Map<String, MirrorAclRecord> mirrorAcls) {
        this(mirrors, topics, partitionStates, mirrorAcls, null);
    }

    /**
     * An image whose partition states are the given records (by partition key), each as if written under its log key.
     *
     * @param controllerPosition the controller's place in the command log, null if it never recorded one
     */
    public MirrorImage(Map<String, MirrorRecord> mirrors, Map<String, MirrorTopicRecord> topics,
                       Map<String, PartitionStateRecord> partitionStates, Map<String, MirrorAclRecord> mirrorAcls,
                       ControllerPositionRecord controllerPosition) {
        this(mirrors, topics, PartitionStateIndex.of(partitionStates.values().stream()
            .collect(Collectors.toMap(PartitionStateRecord::logKey, Function.identity()))), mirrorAcls, Set.of(),
            controllerPosition, Map.of());
    }

    MirrorImage(Map<String, MirrorRecord> mirrors, Map<String, MirrorTopicRecord> topics, PartitionStateIndex states,
                Map<String, MirrorAclRecord> mirrorAcls, Set<String> fencedTopics, ControllerPositionRecord controllerPosition,
                Map<String, SyncedTopicConfigsRecord> syncedTopicConfigs) {
        this.mirrors = Map.copyOf(mirrors);
        this.topics = Map.copyOf(topics);
        this.states = states;
        this.mirrorAcls = Map.copyOf(mirrorAcls);
        this.fencedTopics = Set.copyOf(fencedTopics);
        this.controllerPosition = controllerPosition;
        this.syncedTopicConfigs = Map.copyOf(syncedTopicConfigs);
    }

    /**
     * This image's actual state (partition states, mirror ACLs) with the desired state (mirrors, topics, the controller's
     * position, the synced topic configs) of another.
     */
    public MirrorImage withDesiredStateOf(MirrorImage desired) {
        return new MirrorImage(desired.mirrors, desired.topics, states, mirrorAcls, fencedTopics, desired.controllerPosition,
            desired.syncedTopicConfigs);
    }

    /** This image with other {@link #fencedTopics()}. */
    public MirrorImage withFencedTopics(Set<String> fenced) {
        return new MirrorImage(mirrors, topics, states, mirrorAcls, fenced, controllerPosition, syncedTopicConfigs);
    }

    /**
     * Topics that were read-only mirror topics when this broker lost the mirror state that named them (an internal topic
     * deleted or re-created, records deleted): they stay read-only, whatever this image holds otherwise, until the image
     * knows them again. Never from the internal topics themselves: a broker's own record of what it knew.
     */
    public Set<String> fencedTopics() {
        return fencedTopics;
    }

    /** The partition states, as the internal topic holds them and as derived from it. */
    PartitionStateIndex states() {
        return states;
    }

    /** The last record of each {@code __mirror_state} log key of partition states, by log key. */
    Map<String, PartitionStateRecord> stateLog() {
        return states.stateLog();
    }

    /**
     * The {@code __mirror_state} log keys that hold records of a partition ({@link PartitionStateRecord#key()}), sorted:
     * what must be tombstoned to forget the partition.
     */
    public List<String> stateLogKeysOf(String partitionKey) {
        return states.logKeysOf(partitionKey);
    }

    /**
     * The log keys of the record's partition that a landed {@code record} makes obsolete: the other keys whose records have
     * a leader epoch no higher than its own. The record's writer may tombstone them to keep the topic small.
     */
    public List<String> stateLogKeysSupersededBy(PartitionStateRecord record) {
        String own = record.logKey();
        return stateLogKeysOf(record.key()).stream()
            .filter(k -> !k.equals(own) && stateLog().get(k).leaderEpoch() <= record.leaderEpoch())
            .toList();
    }

    /** Mirrors by name. */
    public Map<String, MirrorRecord> mirrors() {
        return mirrors;
    }

    /** Mirror topics by topic name. */
    public Map<String, MirrorTopicRecord> topics() {
        return topics;
    }

    /** The state of each partition by {@link PartitionStateRecord#key()}: its record with the highest leader epoch. */
    public Map<String, PartitionStateRecord> partitionStates() {
        return states.partitionStates();
    }

    /** The topic configs a mirror's sync last set (or is about to set) on each of its topics, by topic. */
    public Map<String, SyncedTopicConfigsRecord> syncedTopicConfigs() {
        return syncedTopicConfigs;
    }

    /** The configs the sync last declared for a topic ({@link SyncedTopicConfigsRecord}), if it did. */
    public Optional<SyncedTopicConfigsRecord> syncedTopicConfigs(String topic) {
        return Optional.ofNullable(syncedTopicConfigs.get(topic));
    }

    /** The ACLs mirrors created on the destination, by {@link MirrorAclRecord#key()}. */
    public Map<String, MirrorAclRecord> mirrorAcls() {
        return mirrorAcls;
    }

    /** The controller's place in {@code __mirror_commands}: empty until a controller recorded one. */
    public Optional<ControllerPositionRecord> controllerPosition() {
        return Optional.ofNullable(controllerPosition);
    }

    /** The ACLs one mirror created on the destination (the only ones it may remove). */
    public List<MirrorAclRecord> aclsOf(String mirror) {
        return mirrorAcls.values().stream().filter(a -> a.mirror().equals(mirror))
            .sorted(Comparator.comparing(MirrorAclRecord::key)).toList();
    }

    public Optional<MirrorRecord> mirror(String name) {
        return Optional.ofNullable(mirrors.get(name));
    }

    public Optional<MirrorTopicRecord> topic(String name) {
        return Optional.ofNullable(topics.get(name));
    }

    /** The topics of one mirror, sorted by name. */
    public List<MirrorTopicRecord> topicsOf(String mirror) {
        return topics.values().stream()
            .filter(t -> t.mirror().equals(mirror))
            .sorted(Comparator.comparing(MirrorTopicRecord::topic))
            .toList();
    }

    public Optional<PartitionStateRecord> partitionState(String mirror, String topic, int partition) {
        return Optional.ofNullable(states.partitionStates().get(PartitionStateRecord.stateKey(mirror, topic, partition)));
    }

    /**
     * The partition states of one mirror topic, in partition order (from an index: no scan of the other topics, and no
     * copy: an unmodifiable view).
     */
    public Collection<PartitionStateRecord> partitionStatesOf(String mirror, String topic) {
        PartitionStateIndex.TopicStates topicStates = states.statesOf(mirror, topic);
        return topicStates == null ? List.of() : topicStates.states();
    }

    /** True if the image holds the state of exactly {@code partitions} partitions of the mirror topic, all STOPPED. O(1). */
    public boolean stoppedOnEveryPartition(String mirror, String topic, int partitions) {
        PartitionStateIndex.TopicStates topicStates = states.statesOf(mirror, topic);
        return topicStates != null && topicStates.byPartition().size() == partitions && topicStates.stopped() == partitions;
    }

    /**
     * The latest recorded state of a partition as mirrored by a mirror of this cluster whose source is the
     * cluster {@code sourceClusterId}: read on a source, it tells what that source copied from us (failback).
     */
    public Optional<PartitionStateRecord> partitionStateMirroredFrom(String sourceClusterId, String topic, int partition) {
        return mirrors.values().stream()
            .filter(m -> sourceClusterId.equals(m.sourceClusterId()))
            .flatMap(m -> partitionState(m.name(), topic, partition).stream())
            .max(java.util.Comparator.comparingLong(PartitionStateRecord::updatedMs));
    }

    /** The mirror of this cluster that copies {@code topic} from the cluster {@code sourceClusterId} now (not stopped). */
    public Optional<String> mirrorCopyingFrom(String sourceClusterId, String topic) {
        return topic(topic)
            .filter(t -> t.desired() != io.clustermirror.common.DesiredState.STOPPED)
            .flatMap(t -> mirror(t.mirror()))
            .filter(m -> sourceClusterId.equals(m.sourceClusterId()))
            .map(MirrorRecord::name);
    }

    /**
     * The topics of one mirror that a STOP, PAUSE, RESUME or RECOVER selects ({@link TopicPatterns}), by name: the mirror
     * controller applies the selection, the admin client's previews show it.
     *
     * @throws ClusterMirrorException UNKNOWN_CLUSTER_MIRROR, INVALID_REQUEST (no topics), or TOPIC_NOT_IN_CLUSTER_MIRROR
     *                                naming a pattern that matches none of the mirror's topics
     */
    public SortedMap<String, MirrorTopicRecord> selectTopicsOf(String mirror, Collection<String> topics, Collection<String> excludes) {
        if (mirror(mirror).isEmpty()) {
            throw new ClusterMirrorException(MirrorError.UNKNOWN_CLUSTER_MIRROR, "no mirror named '" + mirror + "'");
        }
        Map<String, MirrorTopicRecord> own = topicsOf(mirror).stream()
            .collect(Collectors.toMap(MirrorTopicRecord::topic, Function.identity()));
        SortedMap<String, MirrorTopicRecord> selected = new TreeMap<>();
        TopicPatterns.required(topics).select(own.keySet(), TopicPatterns.of(excludes), MirrorError.TOPIC_NOT_IN_CLUSTER_MIRROR,
            "of mirror '" + mirror + "'").forEach(topic -> selected.put(topic, own.get(topic)));
        return selected;
    }
}
