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
 * @param lastCommand   the command that made the last change; null in records written before it was kept
 */
public record MirrorTopicRecord(String topic, String mirror, DesiredState desired, String sourceTopicId,
                                int partitions, long updatedMs, LastCommand lastCommand) {
    /** A record no command has changed yet (tests, and records written before commands were kept). */
    public MirrorTopicRecord(String topic, String mirror, DesiredState desired, String sourceTopicId, int partitions,
                             long updatedMs) {
        this(topic, mirror, desired, sourceTopicId, partitions, updatedMs, null);
    }

    /** The record as changed by {@code command}, which also gives the time of the change. */
    public MirrorTopicRecord withDesired(DesiredState newDesired, LastCommand command) {
        return new MirrorTopicRecord(topic, mirror, newDesired, sourceTopicId, partitions, command.appliedMs(), command);
    }

    public MirrorTopicRecord withPartitions(int newPartitions, LastCommand command) {
        return new MirrorTopicRecord(topic, mirror, desired, sourceTopicId, newPartitions, command.appliedMs(), command);
    }
}
