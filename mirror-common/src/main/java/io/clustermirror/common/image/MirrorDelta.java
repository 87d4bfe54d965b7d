package io.clustermirror.common.image;

import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.records.ControllerPositionRecord;
import io.clustermirror.common.records.MirrorAclRecord;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.common.records.SyncedTopicConfigsRecord;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;

/**
 * Changes to a {@link MirrorImage}: replay records of the internal topics, then {@link #apply()}.
 *
 * <p>Every record is kept by its log key exactly as compaction keeps it: the last record of a key wins, and a null
 * value removes the key. So replaying a log before or after compaction, or again after a restart, gives the same
 * image. Readers replay committed records only (read_committed): the records of aborted transactions, which the log
 * cleaner removes, never count. {@code __mirror_metadata} keys are {@code mirror:<name>}, {@code topic:<name>},
 * {@code controller:position}, the controller's place in the command log ({@link ControllerPositionRecord}), and
 * {@code synced-configs:<topic>}, the configs a mirror's sync sets on the topic ({@link SyncedTopicConfigsRecord}).
 * {@code __mirror_state} keys with the {@code acl:} prefix are the ACLs a mirror created ({@link MirrorAclRecord}); the
 * others hold partition states under {@link PartitionStateRecord#logKey()}, which carries the writer's leader epoch.
 *
 * <p>The state of a partition is its record with the highest leader epoch among the live log keys
 * ({@link MirrorImage#partitionStates()}). Why this cannot be corrupted by compaction: two destination brokers may both
 * believe for a moment that they lead a partition, but at different leader epochs, so they write under different log
 * keys and compaction never drops one for the other. Each leader epoch has one leader, which sends its records in order
 * ({@code partition.StateWriter}), so the last record of a log key is that leader's latest. A deposed leader's late
 * record only refreshes its own, lower, epoch's key and never wins over a newer leader's record, before or after
 * compaction. A newer leader may tombstone the lower epochs' keys once its own record landed; a deposed leader's record
 * that lands after such a tombstone brings back only a key that still loses.
 *
 * <p>A delta is not thread-safe; the base image is never modified. A {@code __mirror_metadata} key of a kind it does not
 * know is ignored (forward compatibility); a key or value that cannot be decoded throws {@link IllegalArgumentException}
 * and leaves the delta as it was.
 */
public final class MirrorDelta {
    private static final Logger log = LoggerFactory.getLogger(MirrorDelta.class);
    private final MirrorImage base;
    // A null value marks a removal; a missing key means "as in the base image".
    private final Map<String, MirrorRecord> mirrorChanges = new HashMap<>();
    private final Map<String, MirrorTopicRecord> topicChanges = new HashMap<>();
    /** Partition state records by log key. */
    private final Map<String, PartitionStateRecord> stateChanges = new HashMap<>();
    private final Map<String, MirrorAclRecord> aclChanges = new HashMap<>();
    private final Map<String, SyncedTopicConfigsRecord> syncedConfigChanges = new HashMap<>();
    private boolean positionChanged;
    private ControllerPositionRecord position;

    public MirrorDelta(MirrorImage base) {
        this.base = base;
    }

    /**
     * Replays one consumed record of {@code __mirror_metadata} or {@code __mirror_state}: every reader of the internal
     * topics turns records into an image through here.
     *
     * @throws IllegalArgumentException if the record is of another topic, or cannot be decoded (the delta is unchanged)
     */
    public void replay(ConsumerRecord<byte[], byte[]> record) {
        if (record.topic().equals(InternalTopics.METADATA)) {
            replayMetadata(record.key(), record.value());
        } else if (record.topic().equals(InternalTopics.STATE)) {
            replayState(record.key(), record.value());
        } else {
            throw new IllegalArgumentException("Not a record of " + InternalTopics.METADATA + " or " + InternalTopics.STATE + ": "
                + record.topic() + "-" + record.partition() + " offset " + record.offset());
        }
    }

    /**
     * {@link #replay(ConsumerRecord) Replays} the record, or logs at ERROR and skips it if it cannot be decoded: a
     * broker's view must go on past a record that a newer version wrote (or that is damaged).
     */
    public void replayOrSkip(ConsumerRecord<byte[], byte[]> record) {
        try {
            replay(record);
        } catch (RuntimeException e) {
            log.error("Skipping unreadable record at {}-{} offset {}: {}", record.topic(), record.partition(), record.offset(),
                e.toString());
        }
    }

    /**
     * Replays one {@code __mirror_metadata} record (key {@code mirror:<name>}, {@code topic:<name>},
     * {@code synced-configs:<topic>} or {@code controller:position}).
     */
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
        } else if (k.startsWith(SyncedTopicConfigsRecord.KEY_PREFIX)) {
            syncedConfigChanges.put(k.substring(SyncedTopicConfigsRecord.KEY_PREFIX.length()),
                value == null ? null : RecordCodec.decodeSyncedTopicConfigs(value));
        }
        // Any other key (the sealing key, read only by clients that seal secrets, or a kind of record a newer version
        // writes) is not part of the image: ignoring it lets older readers, such as an older admin client, go on.
    }

    /** Replays one {@code __mirror_state} record: it replaces (or, if null, removes) the record of its log key. */
    public void replayState(byte[] key, byte[] value) {
        String k = RecordCodec.decodeKey(key);
        if (RecordCodec.isAclKey(k)) {
            aclChanges.put(k, value == null ? null : RecordCodec.decodeAcl(value));
        } else {
            stateChanges.put(k, value == null ? null : RecordCodec.decodeState(value));
        }
    }

    /** The image with every replayed change; the delta may keep replaying on top of it. */
    public MirrorImage apply() {
        return new MirrorImage(merge(base.mirrors(), mirrorChanges), merge(base.topics(), topicChanges),
            base.states().with(stateChanges), merge(base.mirrorAcls(), aclChanges), base.fencedTopics(),
            positionChanged ? position : base.controllerPosition().orElse(null),
            merge(base.syncedTopicConfigs(), syncedConfigChanges));
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
