package io.clustermirror.common.barrier;

import io.clustermirror.common.batch.Varints;
import org.apache.kafka.common.InvalidRecordException;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * The value of the {@code MIRROR_PID_RESET} barrier's control record, in Kafka's flexible-version
 * message encoding of the schema
 * <pre>
 * { "name": "MirrorPidResetRecord", "validVersions": "0", "flexibleVersions": "0+", "fields": [
 *   { "name": "Version", "type": "int16", "versions": "0" },
 *   { "name": "SourceClusterId", "type": "string", "versions": "0" } ] }
 * </pre>
 * that is: {@code int16 Version}, {@code SourceClusterId} as a COMPACT_STRING (unsigned varint length + 1,
 * then the UTF-8 bytes), then the tagged-fields section (unsigned varint count, then per field an unsigned
 * varint tag, an unsigned varint size and the data).
 *
 * <p>Like Kafka's control record values, a reader parses a value of a newer version by the layout of the
 * version it knows: later versions may only add tagged fields, which {@link #decode} skips.
 *
 * @param version         the record's version; this code writes {@link #CURRENT_VERSION}
 * @param sourceClusterId id of the source cluster the mirrored data came from (never null)
 */
public record MirrorPidResetRecord(short version, String sourceClusterId) {
    public static final short CURRENT_VERSION = 0;

    public MirrorPidResetRecord {
        if (version < 0) {
            throw new IllegalArgumentException("Invalid MirrorPidResetRecord version " + version);
        }
        Objects.requireNonNull(sourceClusterId, "sourceClusterId");
    }

    public static MirrorPidResetRecord of(String sourceClusterId) {
        return new MirrorPidResetRecord(CURRENT_VERSION, sourceClusterId);
    }

    /** The encoded value, positioned at 0 and ready to read. */
    public ByteBuffer encode() {
        byte[] id = sourceClusterId.getBytes(StandardCharsets.UTF_8);
        ByteBuffer buffer = ByteBuffer.allocate(Short.BYTES + Varints.sizeOfUnsignedVarint(id.length + 1)
            + id.length + Varints.sizeOfUnsignedVarint(0));
        buffer.putShort(version);
        Varints.writeUnsignedVarint(id.length + 1, buffer);
        buffer.put(id);
        Varints.writeUnsignedVarint(0, buffer); // no tagged fields
        return buffer.flip();
    }

    /**
     * Decodes a value from its current position without moving it.
     *
     * @throws InvalidRecordException if the value is truncated or malformed
     */
    public static MirrorPidResetRecord decode(ByteBuffer value) {
        ByteBuffer buffer = value.duplicate();
        try {
            short version = buffer.getShort();
            if (version < 0) {
                throw new InvalidRecordException("Invalid MirrorPidResetRecord version " + version);
            }
            int length = Varints.readUnsignedVarint(buffer) - 1;
            if (length < 0) {
                throw new InvalidRecordException("MirrorPidResetRecord has no SourceClusterId");
            }
            String sourceClusterId = new String(bytes(buffer, length), StandardCharsets.UTF_8);
            int taggedFields = Varints.readUnsignedVarint(buffer);
            for (int i = 0; i < taggedFields; i++) {
                Varints.readUnsignedVarint(buffer); // tag: none is known yet
                bytes(buffer, Varints.readUnsignedVarint(buffer));
            }
            return new MirrorPidResetRecord(version, sourceClusterId);
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            throw new InvalidRecordException("Malformed MirrorPidResetRecord: " + e);
        }
    }

    private static byte[] bytes(ByteBuffer buffer, int length) {
        if (length < 0 || length > buffer.remaining()) {
            throw new BufferUnderflowException();
        }
        byte[] bytes = new byte[length];
        buffer.get(bytes);
        return bytes;
    }
}
