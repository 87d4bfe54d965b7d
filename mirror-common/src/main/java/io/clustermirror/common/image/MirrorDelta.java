package io.clustermirror.common.image;

import io.clustermirror.common.records.ControllerPositionRecord;
import io.clustermirror.common.records.MirrorAclRecord;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.RecordCodec;

import java.util.HashMap;
import java.util.Map;

/**
 * Changes to a {@link MirrorImage}: replay records of the internal topics, then {@link #apply()}.
 *
 * <p>{@code __mirror_metadata}: a null value removes the key; {@code controller:position} is the controller's place in
 * the command log ({@link ControllerPositionRecord}), the last record wins. {@code __mirror_state}: a record replaces
 * the current one for its key only when its {@code leaderEpoch} is at least the current one's (a stale
 * destination leader cannot overwrite a newer leader's state); a null value removes the key. Keys with the
 * {@code acl:} prefix are the ACLs a mirror created ({@link MirrorAclRecord}): the last record wins.
 *
 * <p>Records are keyed by their log key, as compaction keys them. A delta is not thread-safe; the base
 * image is never modified. A key or value that cannot be decoded throws {@link IllegalArgumentException}
 * and leaves the delta as it was.
 */
public final class MirrorDelta {
    private final MirrorImage base;
    // A null value marks a removal; a missing key means "as in the base image".
    private final Map<String, MirrorRecord> mirrorChanges = new HashMap<>();
    private final Map<String, MirrorTopicRecord> topicChanges = new HashMap<>();
    private final Map<String, PartitionStateRecord> stateChanges = new HashMap<>();
    private final Map<String, MirrorAclRecord> aclChanges = new HashMap<>();
    private boolean positionChanged;
    private ControllerPositionRecord position;

    public MirrorDelta(MirrorImage base) {
        this.base = base;
    }

    /** Replays one {@code __mirror_metadata} record (key {@code mirror:<name>}, {@code topic:<name>} or {@code controller:position}). */
    public void replayMetadata(byte[] key, byte[] value) {
        String k = RecordCodec.decodeKey(key);
        if (k.equals(RecordCodec.CONTROLLER_POSITION_KEY)) {
            position = value == null ? null : RecordCodec.decodeControllerPosition(value);
            positionChanged = true;
        } else if (k.startsWith(RecordCodec.MIRROR_KEY_PREFIX)) {
            mirrorChanges.put(k.substring(RecordCodec.MIRROR_KEY_PREFIX.length()),
                value == null ? null : RecordCodec.decodeMirror(value));
        } else if (k.startsWith(RecordCodec.TOPIC_KEY_PREFIX)) {
            topicChanges.put(k.substring(RecordCodec.TOPIC_KEY_PREFIX.length()),
                value == null ? null : RecordCodec.decodeTopic(value));
        } else {
            throw new IllegalArgumentException("Unknown __mirror_metadata key '" + k + "'");
        }
    }

    /** Replays one {@code __mirror_state} record, ignoring it if it comes from a stale leader. */
    public void replayState(byte[] key, byte[] value) {
        String k = RecordCodec.decodeKey(key);
        if (RecordCodec.isAclKey(k)) {
            aclChanges.put(k, value == null ? null : RecordCodec.decodeAcl(value));
            return;
        }
        if (value == null) {
            stateChanges.put(k, null);
            return;
        }
        PartitionStateRecord record = RecordCodec.decodeState(value);
        PartitionStateRecord current = stateChanges.containsKey(k)
            ? stateChanges.get(k)
            : base.partitionStates().get(k);
        if (current == null || record.leaderEpoch() >= current.leaderEpoch()) {
            stateChanges.put(k, record);
        }
    }

    /** The image with every replayed change; the delta may keep replaying on top of it. */
    public MirrorImage apply() {
        return new MirrorImage(merge(base.mirrors(), mirrorChanges), merge(base.topics(), topicChanges),
            merge(base.partitionStates(), stateChanges), merge(base.mirrorAcls(), aclChanges),
            positionChanged ? position : base.controllerPosition().orElse(null));
    }

    private static <V> Map<String, V> merge(Map<String, V> base, Map<String, V> changes) {
        if (changes.isEmpty()) {
            return base;
        }
        Map<String, V> merged = new HashMap<>(base);
        changes.forEach((k, v) -> {
            if (v == null) {
                merged.remove(k);
            } else {
                merged.put(k, v);
            }
        });
        return merged;
    }
}
