package io.clustermirror.common.records;

import io.clustermirror.common.image.MirrorDelta;
import io.clustermirror.common.image.MirrorImage;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MirrorAclRecordTest {
    private static AclBinding acl(String topic, String principal) {
        return new AclBinding(new ResourcePattern(ResourceType.TOPIC, topic, PatternType.PREFIXED),
            new AccessControlEntry(principal, "*", AclOperation.READ, AclPermissionType.ALLOW));
    }

    @Test
    void roundTripsThroughTheCodecAndBackToTheBinding() {
        MirrorAclRecord record = MirrorAclRecord.of("dr", acl("orders/", "User:a:b"), 7L);
        MirrorAclRecord decoded = RecordCodec.decodeAcl(RecordCodec.encodeAcl(record));
        assertEquals(record, decoded);
        assertEquals(acl("orders/", "User:a:b"), decoded.binding());
    }

    @Test
    void keysAreInjectiveAndNameTheirMirror() {
        // Separators inside names and principals cannot make two bindings share a key.
        String k1 = MirrorAclRecord.key("dr", acl("a/b", "User:c"));
        String k2 = MirrorAclRecord.key("dr", acl("a", "b/User:c"));
        assertNotEquals(k1, k2);
        assertTrue(RecordCodec.isAclKey(k1));
        assertEquals("dr", MirrorAclRecord.mirrorOfKey(k1));
        assertEquals(k1, MirrorAclRecord.of("dr", acl("a/b", "User:c"), 1L).key());
    }

    @Test
    void stateTopicReplaysAclRecordsApartFromPartitionStatesAndTombstonesRemoveThem() {
        MirrorAclRecord a = MirrorAclRecord.of("dr", acl("x", "User:a"), 1L);
        MirrorAclRecord b = MirrorAclRecord.of("other", acl("x", "User:a"), 1L);
        MirrorDelta delta = new MirrorDelta(MirrorImage.EMPTY);
        delta.replayState(RecordCodec.encodeKey(a.key()), RecordCodec.encodeAcl(a));
        delta.replayState(RecordCodec.encodeKey(b.key()), RecordCodec.encodeAcl(b));
        MirrorImage image = delta.apply();
        assertEquals(List.of(a), image.aclsOf("dr"));
        assertEquals(Map.of(), image.partitionStates());

        MirrorDelta removal = new MirrorDelta(image);
        removal.replayState(RecordCodec.encodeKey(a.key()), null);
        MirrorImage after = removal.apply();
        assertEquals(List.of(), after.aclsOf("dr"));
        assertEquals(List.of(b), after.aclsOf("other"));
    }
}
