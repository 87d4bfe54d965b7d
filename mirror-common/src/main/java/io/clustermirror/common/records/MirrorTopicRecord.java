package io.clustermirror.common.records;

import io.clustermirror.common.DesiredState;

/**
 * A destination topic's membership in a mirror, in {@code __mirror_metadata} (key {@code topic:<name>}).
 * A topic belongs to at most one mirror. The destination topic has the source topic's name.
 *
 * @param topic         topic name (same on source and destination)
 * @param mirror        the mirror it belongs to
 * @param desired       what the operator asked for
 * @param sourceTopicId the source topic's id when mirroring started; a different id at the source
 *                      means the source topic was recreated, and the partition must fail
 * @param partitions    partition count (source and destination are kept equal)
 * @param updatedMs     time of the last change
 */
public record MirrorTopicRecord(String topic, String mirror, DesiredState desired, String sourceTopicId,
                                int partitions, long updatedMs) {
    public MirrorTopicRecord withDesired(DesiredState newDesired, long nowMs) {
        return new MirrorTopicRecord(topic, mirror, newDesired, sourceTopicId, partitions, nowMs);
    }

    public MirrorTopicRecord withPartitions(int newPartitions, long nowMs) {
        return new MirrorTopicRecord(topic, mirror, desired, sourceTopicId, newPartitions, nowMs);
    }
}
