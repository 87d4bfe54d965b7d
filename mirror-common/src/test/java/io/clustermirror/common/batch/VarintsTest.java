package io.clustermirror.common.batch;

import org.apache.kafka.common.utils.ByteUtils;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Our varints against Kafka's codec (the build's Kafka, test scope only), byte for byte, at every length. */
class VarintsTest {
    private static final int[] INTS = {0, 1, -1, 63, -64, 64, 127, 128, 8191, -8192, 16383, 16384, 1 << 20, -(1 << 27),
        Integer.MAX_VALUE, Integer.MIN_VALUE};
    private static final long[] LONGS = {0L, 1L, -1L, 1L << 35, -(1L << 40), 1L << 62, Long.MAX_VALUE, Long.MIN_VALUE};

    @Test
    void writesTheBytesKafkaWritesAndReadsThemBack() {
        for (int v : INTS) {
            assertSameBytes(b -> Varints.writeVarint(v, b), b -> ByteUtils.writeVarint(v, b));
            assertSameBytes(b -> Varints.writeUnsignedVarint(v, b), b -> ByteUtils.writeUnsignedVarint(v, b));
            assertEquals(ByteUtils.sizeOfVarint(v), Varints.sizeOfVarint(v), "size of " + v);
            assertEquals(ByteUtils.sizeOfUnsignedVarint(v), Varints.sizeOfUnsignedVarint(v), "unsigned size of " + v);
            ByteBuffer b = ByteBuffer.allocate(10);
            Varints.writeVarint(v, b);
            Varints.writeUnsignedVarint(v, b.clear());
            assertEquals(v, Varints.readUnsignedVarint(b.flip()));
            b.clear();
            Varints.writeVarint(v, b);
            assertEquals(v, Varints.readVarint(b.flip()));
        }
        for (long v : LONGS) {
            assertSameBytes(b -> Varints.writeVarlong(v, b), b -> ByteUtils.writeVarlong(v, b));
            assertEquals(ByteUtils.sizeOfVarlong(v), Varints.sizeOfVarlong(v), "size of " + v);
            ByteBuffer b = ByteBuffer.allocate(10);
            Varints.writeVarlong(v, b);
            assertEquals(v, Varints.readVarlong(b.flip()));
        }
    }

    @Test
    void refusesAVarintLongerThanItsType() {
        ByteBuffer tooLong = ByteBuffer.wrap(new byte[] {(byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 1});
        assertThrows(IllegalArgumentException.class, () -> Varints.readUnsignedVarint(tooLong));
    }

    private interface Writer {
        void write(ByteBuffer b);
    }

    private static void assertSameBytes(Writer ours, Writer kafka) {
        ByteBuffer a = ByteBuffer.allocate(10);
        ByteBuffer b = ByteBuffer.allocate(10);
        ours.write(a);
        kafka.write(b);
        assertEquals(b.flip(), a.flip());
    }
}
