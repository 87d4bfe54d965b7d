package io.clustermirror.common.barrier;

import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class MirrorPidResetRecordTest {
    private static byte[] bytes(ByteBuffer buffer) {
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return bytes;
    }

    @Test
    void encodesTheFlexibleSchemaExactly() {
        // int16 0, compact string "abc" (varint 4 + bytes), empty tagged fields (varint 0)
        assertArrayEquals(new byte[] {0, 0, 4, 'a', 'b', 'c', 0}, bytes(MirrorPidResetRecord.of("abc").encode()));
        assertArrayEquals(new byte[] {0, 0, 1, 0}, bytes(MirrorPidResetRecord.of("").encode()));
    }

    @Test
    void readsBackWithKafkaAccessor() {
        String id = "x".repeat(200) + "é"; // length needs a two-byte varint
        ByteBufferAccessor accessor = new ByteBufferAccessor(MirrorPidResetRecord.of(id).encode());
        assertEquals(0, accessor.readShort());
        int length = accessor.readUnsignedVarint() - 1;
        assertEquals(id, accessor.readString(length));
        assertEquals(0, accessor.readUnsignedVarint());
        assertEquals(0, accessor.remaining());
    }

    @Test
    void roundTripsWithoutMovingTheBuffer() {
        ByteBuffer encoded = MirrorPidResetRecord.of("kQ8mH3rVTuG1xTz0wq8XwA").encode();
        assertEquals(new MirrorPidResetRecord((short) 0, "kQ8mH3rVTuG1xTz0wq8XwA"), MirrorPidResetRecord.decode(encoded));
        assertEquals(0, encoded.position());
    }

    @Test
    void skipsUnknownTaggedFieldsOfNewerVersions() {
        // version 1, "id", one tagged field (tag 3, 2 bytes)
        ByteBuffer newer = ByteBuffer.wrap(new byte[] {0, 1, 3, 'i', 'd', 1, 3, 2, 9, 9});
        assertEquals(new MirrorPidResetRecord((short) 1, "id"), MirrorPidResetRecord.decode(newer));
    }

    @Test
    void rejectsMalformedValues() {
        assertThrows(InvalidRecordException.class, () -> MirrorPidResetRecord.decode(ByteBuffer.wrap(new byte[] {0})));
        assertThrows(InvalidRecordException.class, () -> MirrorPidResetRecord.decode(ByteBuffer.wrap(new byte[] {0, 0, 0, 0})));
        assertThrows(InvalidRecordException.class, () -> MirrorPidResetRecord.decode(ByteBuffer.wrap(new byte[] {0, 0, 9, 'a', 0})));
        assertThrows(InvalidRecordException.class, () -> MirrorPidResetRecord.decode(ByteBuffer.wrap(new byte[] {-1, -1, 1, 0})));
        assertThrows(InvalidRecordException.class, () -> MirrorPidResetRecord.decode(ByteBuffer.wrap(new byte[] {0, 0, 1, 1, 0, 5, 1})));
        assertThrows(IllegalArgumentException.class, () -> new MirrorPidResetRecord((short) -1, "a"));
        assertThrows(NullPointerException.class, () -> MirrorPidResetRecord.of(null));
    }
}
