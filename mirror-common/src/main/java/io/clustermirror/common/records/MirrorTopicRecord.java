package io.clustermirror.common.records;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.clustermirror.common.DesiredState;

import java.util.ArrayList;
import java.util.List;

/**
 * A destination topic's membership in a mirror, in {@code __mirror_metadata} (key {@code topic:<name>}).
 * A topic belongs to at most one mirror. The destination topic has the source topic's name.
 *
 * @param topic            topic name (same on source and destination)
 * @param mirror           the mirror it belongs to
 * @param desired          what the operator asked for
 * @param sourceTopicId    the source topic's id when mirroring started; a different id at the source
 *                         means the source topic was recreated, and the partition must fail
 * @param partitions       partition count (source and destination are kept equal)
 * @param updatedMs        time of the last change
 * @param lastCommand      the command that made the last change; null in records written before it was kept
 * @param heldChanges      the source's changes the metadata sync holds back instead of copying (at most one per config key
 *                         and one partition growth); empty when none is held
 * @param logStartDecision the operator's last decision on held changes, which the partition leaders apply to the source log
 *                         start moves they hold ({@link HeldLogStarts}); null when there was none
 * @param recoveryCommandId the id of the operator's last {@code --recover} of the topic: each new value tells the partition
 *                         leaders to try their FAILED partitions again now; null when there was none
 * @param stopCuts         while a consistent stop is under way: where it cuts each partition, by partition (-1 where it
 *                         chose none: that partition cuts at its last stable offset); empty for any other stop
 * @param stopGroupOffsets while a consistent stop is under way: the offsets it gives to groups that commit the topic's
 *                         partitions inside transactions; empty for none and for any other stop
 */
public record MirrorTopicRecord(String topic, String mirror, DesiredState desired, String sourceTopicId,
                                int partitions, long updatedMs, LastCommand lastCommand,
                                @JsonInclude(JsonInclude.Include.NON_EMPTY) List<HeldChange> heldChanges,
                                @JsonInclude(JsonInclude.Include.NON_NULL) HeldDecision logStartDecision,
                                @JsonInclude(JsonInclude.Include.NON_NULL) String recoveryCommandId,
                                @JsonInclude(JsonInclude.Include.NON_EMPTY) List<Long> stopCuts,
                                @JsonInclude(JsonInclude.Include.NON_EMPTY) List<GroupOffset> stopGroupOffsets) {
    public MirrorTopicRecord {
        heldChanges = heldChanges == null ? List.of() : List.copyOf(heldChanges);
        stopCuts = stopCuts == null ? List.of() : List.copyOf(stopCuts);
        stopGroupOffsets = stopGroupOffsets == null ? List.of() : List.copyOf(stopGroupOffsets);
    }

    /** The offset a consistent stop gives to a group on one partition of the topic. */
    public record GroupOffset(int partition, String group, long offset) {
    }

    /** A record whose consistent stop, if any, sets no group's offset. */
    public MirrorTopicRecord(String topic, String mirror, DesiredState desired, String sourceTopicId, int partitions,
                             long updatedMs, LastCommand lastCommand, List<HeldChange> heldChanges, HeldDecision logStartDecision,
                             String recoveryCommandId, List<Long> stopCuts) {
        this(topic, mirror, desired, sourceTopicId, partitions, updatedMs, lastCommand, heldChanges, logStartDecision, recoveryCommandId,
            stopCuts, List.of());
    }

    /** A record with no consistent stop under way, as the writers before consistent stops wrote. */
    public MirrorTopicRecord(String topic, String mirror, DesiredState desired, String sourceTopicId, int partitions,
                             long updatedMs, LastCommand lastCommand, List<HeldChange> heldChanges, HeldDecision logStartDecision,
                             String recoveryCommandId) {
        this(topic, mirror, desired, sourceTopicId, partitions, updatedMs, lastCommand, heldChanges, logStartDecision, recoveryCommandId,
            List.of());
    }

    /** Where a consistent stop of this topic cuts {@code partition}, or -1 when it chose no cut there (or none is under way). */
    public long stopCutOf(int partition) {
        return partition < stopCuts.size() ? stopCuts.get(partition) : -1;
    }

    /** The offsets a consistent stop of this topic gives on {@code partition}, by group; empty for none. */
    public java.util.Map<String, Long> stopGroupOffsetsOf(int partition) {
        java.util.Map<String, Long> offsets = new java.util.HashMap<>();
        stopGroupOffsets.stream().filter(g -> g.partition() == partition).forEach(g -> offsets.put(g.group(), g.offset()));
        return offsets;
    }

    /** A record no {@code --recover} has touched, as the writers before recoveries wrote. */
    public MirrorTopicRecord(String topic, String mirror, DesiredState desired, String sourceTopicId, int partitions,
                             long updatedMs, LastCommand lastCommand, List<HeldChange> heldChanges, HeldDecision logStartDecision) {
        this(topic, mirror, desired, sourceTopicId, partitions, updatedMs, lastCommand, heldChanges, logStartDecision, null);
    }

    /** A record that holds nothing back, as the writers before held changes wrote. */
    public MirrorTopicRecord(String topic, String mirror, DesiredState desired, String sourceTopicId, int partitions,
                             long updatedMs, LastCommand lastCommand) {
        this(topic, mirror, desired, sourceTopicId, partitions, updatedMs, lastCommand, List.of(), null);
    }

    /** A record no command has changed yet (tests, and records written before commands were kept). */
    public MirrorTopicRecord(String topic, String mirror, DesiredState desired, String sourceTopicId, int partitions,
                             long updatedMs) {
        this(topic, mirror, desired, sourceTopicId, partitions, updatedMs, null);
    }

    /** The record as changed by {@code command}, which also gives the time of the change; no consistent stop's cuts. */
    public MirrorTopicRecord withDesired(DesiredState newDesired, LastCommand command) {
        return new MirrorTopicRecord(topic, mirror, newDesired, sourceTopicId, partitions, command.appliedMs(), command,
            heldChanges, logStartDecision, recoveryCommandId, List.of(), List.of());
    }

    /**
     * The record STOPPED by a consistent stop that cuts each partition at {@code cuts} (by partition, -1 for none) and
     * gives {@code groupOffsets}.
     */
    public MirrorTopicRecord stoppedAt(List<Long> cuts, List<GroupOffset> groupOffsets, LastCommand command) {
        return new MirrorTopicRecord(topic, mirror, DesiredState.STOPPED, sourceTopicId, partitions, command.appliedMs(), command,
            heldChanges, logStartDecision, recoveryCommandId, cuts, groupOffsets);
    }

    /** The record grown to {@code newPartitions}: a held growth to that count is done. */
    public MirrorTopicRecord withPartitions(int newPartitions, LastCommand command) {
        List<HeldChange> held = heldChanges.stream()
            .filter(c -> c.kind() != HeldChange.Kind.PARTITIONS || Integer.parseInt(c.value()) > newPartitions).toList();
        return new MirrorTopicRecord(topic, mirror, desired, sourceTopicId, newPartitions, command.appliedMs(), command,
            held, logStartDecision, recoveryCommandId, stopCuts, stopGroupOffsets);
    }

    /**
     * The record holding exactly the changes the sync found in its last round: a change already held keeps its time and
     * status (so a hold is never restarted and a decision never lost); a new one is held from {@code command}'s time; a
     * held change the sync no longer finds (copied, or the source went back) is forgotten.
     */
    public MirrorTopicRecord holding(List<HeldChange> found, LastCommand command) {
        List<HeldChange> next = new ArrayList<>();
        for (HeldChange change : found) {
            next.add(heldChanges.stream().filter(change::sameChange).findFirst()
                .orElse(HeldChange.held(change.kind(), change.name(), change.value(), command.appliedMs())));
        }
        return new MirrorTopicRecord(topic, mirror, desired, sourceTopicId, partitions, command.appliedMs(), command,
            next, logStartDecision, recoveryCommandId, stopCuts, stopGroupOffsets);
    }

    /**
     * The record after an operator's decision on what it holds: every held change marked applied or rejected, and the
     * decision kept for the partition leaders' log start moves.
     */
    public MirrorTopicRecord decided(HeldDecision.Verdict verdict, LastCommand command) {
        HeldChange.Status status = verdict == HeldDecision.Verdict.APPLY ? HeldChange.Status.APPROVED : HeldChange.Status.REJECTED;
        return new MirrorTopicRecord(topic, mirror, desired, sourceTopicId, partitions, command.appliedMs(), command,
            heldChanges.stream().map(c -> c.withStatus(status)).toList(), new HeldDecision(verdict, command.appliedMs()), recoveryCommandId,
            stopCuts, stopGroupOffsets);
    }

    /** The record after an operator's {@code --recover}: its partition leaders try their FAILED partitions again now. */
    public MirrorTopicRecord recovered(LastCommand command) {
        return new MirrorTopicRecord(topic, mirror, desired, sourceTopicId, partitions, command.appliedMs(), command, heldChanges,
            logStartDecision, command.commandId(), stopCuts, stopGroupOffsets);
    }
}
