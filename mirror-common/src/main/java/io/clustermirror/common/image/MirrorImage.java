package io.clustermirror.common.image;

import io.clustermirror.common.records.ControllerPositionRecord;
import io.clustermirror.common.records.MirrorAclRecord;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * An immutable view of the mirror control plane, built by replaying {@code __mirror_metadata} (desired
 * state) and {@code __mirror_state} (actual per-partition state) through a {@link MirrorDelta}, in the
 * style of Kafka's {@code MetadataImage}. Every broker keeps one; the admin client builds one to list
 * and describe.
 */
public final class MirrorImage {
    public static final MirrorImage EMPTY = new MirrorImage(Map.of(), Map.of(), Map.of(), Map.of(), null);

    private final Map<String, MirrorRecord> mirrors;
    private final Map<String, MirrorTopicRecord> topics;
    private final Map<String, PartitionStateRecord> partitionStates;
    private final Map<String, MirrorAclRecord> mirrorAcls;
    private final ControllerPositionRecord controllerPosition;

    public MirrorImage(Map<String, MirrorRecord> mirrors, Map<String, MirrorTopicRecord> topics,
                       Map<String, PartitionStateRecord> partitionStates) {
        this(mirrors, topics, partitionStates, Map.of());
    }

    public MirrorImage(Map<String, MirrorRecord> mirrors, Map<String, MirrorTopicRecord> topics,
                       Map<String, PartitionStateRecord> partitionStates, Map<String, MirrorAclRecord> mirrorAcls) {
        this(mirrors, topics, partitionStates, mirrorAcls, null);
    }

    /** @param controllerPosition the controller's place in the command log, null if it never recorded one */
    public MirrorImage(Map<String, MirrorRecord> mirrors, Map<String, MirrorTopicRecord> topics,
                       Map<String, PartitionStateRecord> partitionStates, Map<String, MirrorAclRecord> mirrorAcls,
                       ControllerPositionRecord controllerPosition) {
        this.mirrors = Map.copyOf(mirrors);
        this.topics = Map.copyOf(topics);
        this.partitionStates = Map.copyOf(partitionStates);
        this.mirrorAcls = Map.copyOf(mirrorAcls);
        this.controllerPosition = controllerPosition;
    }

    /** Mirrors by name. */
    public Map<String, MirrorRecord> mirrors() {
        return mirrors;
    }

    /** Mirror topics by topic name. */
    public Map<String, MirrorTopicRecord> topics() {
        return topics;
    }

    /** Partition states by {@link PartitionStateRecord#key()}. */
    public Map<String, PartitionStateRecord> partitionStates() {
        return partitionStates;
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
        return Optional.ofNullable(partitionStates.get(PartitionStateRecord.stateKey(mirror, topic, partition)));
    }

    /** The partition states of one mirror topic, sorted by partition. */
    public List<PartitionStateRecord> partitionStatesOf(String mirror, String topic) {
        return partitionStates.values().stream()
            .filter(s -> s.mirror().equals(mirror) && s.topic().equals(topic))
            .sorted(Comparator.comparingInt(PartitionStateRecord::partition))
            .toList();
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
}
