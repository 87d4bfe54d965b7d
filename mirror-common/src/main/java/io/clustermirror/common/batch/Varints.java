package io.clustermirror.common.batch;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;

/**
 * The variable-length integers of Kafka's record format and flexible message versions: unsigned LEB128 (7 bits a byte,
 * least significant group first, high bit set on every byte but the last), and signed ones zig-zag encoded into it so
 * that small negative numbers stay short. Kafka's own codec is an internal class whose package moved between releases;
 * the encoding itself is part of the wire format and never changes.
 *
 * <p>Reads move the buffer's position; a value that runs past the buffer's limit, or longer than 5 bytes (an int) or
 * 10 bytes (a long), throws {@link IllegalArgumentException} or {@link BufferUnderflowException}.
 */
public final class Varints {
    private Varints() {
    }

    /** Reads an unsigned varint of at most 5 bytes. */
    public static int readUnsignedVarint(ByteBuffer buffer) {
        int value = 0;
        for (int shift = 0; shift < 35; shift += 7) {
            byte b = buffer.get();
            value |= (b & 0x7f) << shift;
            if ((b & 0x80) == 0) {
                return value;
            }
        }
        throw new IllegalArgumentException("Varint is longer than 5 bytes");
    }

    /** Reads a zig-zag encoded varint of at most 5 bytes. */
    public static int readVarint(ByteBuffer buffer) {
        int raw = readUnsignedVarint(buffer);
        return (raw >>> 1) ^ -(raw & 1);
    }

    /** Reads a zig-zag encoded varlong of at most 10 bytes. */
    public static long readVarlong(ByteBuffer buffer) {
        long raw = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            byte b = buffer.get();
            raw |= (long) (b & 0x7f) << shift;
            if ((b & 0x80) == 0) {
                return (raw >>> 1) ^ -(raw & 1);
            }
        }
        throw new IllegalArgumentException("Varlong is longer than 10 bytes");
    }

    /** Writes {@code value} as an unsigned varint. */
    public static void writeUnsignedVarint(int value, ByteBuffer buffer) {
        int rest = value;
        while ((rest & ~0x7f) != 0) {
            buffer.put((byte) ((rest & 0x7f) | 0x80));
            rest >>>= 7;
        }
        buffer.put((byte) rest);
    }

    /** Writes {@code value} zig-zag encoded as a varint. */
    public static void writeVarint(int value, ByteBuffer buffer) {
        writeUnsignedVarint((value << 1) ^ (value >> 31), buffer);
    }

    /** Writes {@code value} zig-zag encoded as a varlong. */
    public static void writeVarlong(long value, ByteBuffer buffer) {
        long rest = (value << 1) ^ (value >> 63);
        while ((rest & ~0x7fL) != 0) {
            buffer.put((byte) ((rest & 0x7f) | 0x80));
            rest >>>= 7;
        }
        buffer.put((byte) rest);
    }

    /** The bytes {@link #writeUnsignedVarint} takes for {@code value}. */
    public static int sizeOfUnsignedVarint(int value) {
        int leadingZeros = Integer.numberOfLeadingZeros(value);
        return leadingZeros == 32 ? 1 : (38 - leadingZeros) / 7;
    }

    /** The bytes {@link #writeVarint} takes for {@code value}. */
    public static int sizeOfVarint(int value) {
        return sizeOfUnsignedVarint((value << 1) ^ (value >> 31));
    }

    /** The bytes {@link #writeVarlong} takes for {@code value}. */
    public static int sizeOfVarlong(long value) {
        long zigZag = (value << 1) ^ (value >> 63);
        int leadingZeros = Long.numberOfLeadingZeros(zigZag);
        return leadingZeros == 64 ? 1 : (70 - leadingZeros) / 7;
    }
}
