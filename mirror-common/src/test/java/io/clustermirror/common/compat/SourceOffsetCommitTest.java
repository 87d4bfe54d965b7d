package io.clustermirror.common.compat;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.coordinator.group.generated.GroupMetadataKey;
import org.apache.kafka.coordinator.group.generated.LegacyOffsetCommitKey;
import org.apache.kafka.coordinator.group.generated.OffsetCommitKey;
import org.apache.kafka.coordinator.group.generated.OffsetCommitValue;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Records of {@code __consumer_offsets} as Kafka's own generated writers encode them, read back. */
class SourceOffsetCommitTest {
    private static final SourceOffsetCommit COMMIT = new SourceOffsetCommit("app", "orders", 3, 4242L);

    private static ByteBuffer value(int version) {
        OffsetCommitValue value = new OffsetCommitValue().setOffset(4242L).setMetadata("m").setCommitTimestamp(1_000L);
        if (version >= 3) {
            value.setLeaderEpoch(5);
        }
        if (version == 1) {
            value.setExpireTimestamp(9_000L);
        }
        if (version >= 4) {
            value.setTopicId(Uuid.randomUuid()); // a tagged field
        }
        return MessageUtil.toVersionPrefixedByteBuffer((short) version, value);
    }

    @Test
    void readsTheOffsetOfEveryValueVersionUnderBothKeyTypes() {
        ByteBuffer key = MessageUtil.toCoordinatorTypePrefixedByteBuffer(new OffsetCommitKey().setGroup("app").setTopic("orders").setPartition(3));
        ByteBuffer legacy = MessageUtil.toCoordinatorTypePrefixedByteBuffer(
            new LegacyOffsetCommitKey().setGroup("app").setTopic("orders").setPartition(3));
        for (int version = 0; version <= 4; version++) {
            assertEquals(Optional.of(COMMIT), SourceOffsetCommit.of(key, value(version)), "value version " + version);
            assertEquals(Optional.of(COMMIT), SourceOffsetCommit.of(legacy, value(version)), "legacy key, value version " + version);
        }
    }

    @Test
    void otherRecordsTombstonesAndUnknownVersionsAreNoCommits() {
        ByteBuffer group = MessageUtil.toCoordinatorTypePrefixedByteBuffer(new GroupMetadataKey().setGroup("app"));
        assertEquals(Optional.empty(), SourceOffsetCommit.of(group, value(3)), "group metadata");
        ByteBuffer key = MessageUtil.toCoordinatorTypePrefixedByteBuffer(new OffsetCommitKey().setGroup("app").setTopic("orders").setPartition(3));
        assertEquals(Optional.empty(), SourceOffsetCommit.of(key, null), "a deleted offset");
        ByteBuffer future = value(4);
        future.putShort(0, (short) 9);
        assertEquals(Optional.empty(), SourceOffsetCommit.of(key, future), "a later version: not ours to guess");
    }

    @Test
    void aTruncatedKeyIsRefusedNamingIt() {
        ByteBuffer key = MessageUtil.toCoordinatorTypePrefixedByteBuffer(new OffsetCommitKey().setGroup("app").setTopic("orders").setPartition(3));
        ByteBuffer cut = key.duplicate().limit(key.limit() - 2);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SourceOffsetCommit.of(cut, value(3)));
        assertTrue(e.getMessage().contains("__consumer_offsets offset commit that does not decode"), e.getMessage());
    }

    @Test
    void placesAGroupOnTheLogPartitionKafkaDoes() {
        for (String group : new String[] {"app", "orders-pipeline", "", "polygenelubricants", "GydZG_"}) {
            int kafka = org.apache.kafka.common.utils.Utils.abs(group.hashCode()) % 50;
            assertEquals(kafka, SourceOffsetCommit.logPartitionOf(group, 50), group);
        }
    }
}
