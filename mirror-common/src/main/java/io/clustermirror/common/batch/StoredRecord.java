package io.clustermirror.common.batch;

import org.apache.kafka.common.errors.CorruptRecordException;

import java.io.IOException;
import java.io.InputStream;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * One record of a v2 batch, decoded (Kafka's {@code DefaultRecord} layout: a varint body length, then attributes int8,
 * timestamp delta varlong, offset delta varint, key and value as varint length (-1: null) and bytes, a varint header
 * count and the headers, each a varint-length UTF-8 key and a varint-length value).
 *
 * @param offset    the batch's base offset plus the record's offset delta
 * @param timestamp the record's timestamp: the batch's max timestamp for every record of a log-append-time batch, else
 *                  the base timestamp plus the record's delta
 * @param key       the key, or null
 * @param value     the value, or null (a tombstone)
 * @param headers   the headers in order
 */
public record StoredRecord(long offset, long timestamp, ByteBuffer key, ByteBuffer value, List<Header> headers) {
    /** A record header; its value may be null. */
    public record Header(String key, byte[] value) {
        public Header {
            Objects.requireNonNull(key, "key");
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Header h && key.equals(h.key) && Arrays.equals(value, h.value);
        }

        @Override
        public int hashCode() {
            return 31 * key.hashCode() + Arrays.hashCode(value);
        }

        @Override
        public String toString() {
            return key + "=" + (value == null ? "null" : value.length + " bytes");
        }
    }

    public StoredRecord {
        headers = List.copyOf(headers);
    }

    /** True if the other record has the same timestamp, key, value and headers (offsets are the caller's to compare). */
    public boolean sameContent(StoredRecord other) {
        return timestamp == other.timestamp && Objects.equals(key, other.key) && Objects.equals(value, other.value)
            && headers.equals(other.headers);
    }

    /** The records of a v2 batch; see {@link StoredBatch#records()}. */
    static List<StoredRecord> readAll(StoredBatch batch) {
        ByteBuffer block = batch.bytes().position(StoredBatch.RECORDS_OFFSET);
        int count = batch.recordCount();
        if (count < 0) {
            throw new CorruptRecordException("Batch " + batch.range() + " has a negative record count " + count);
        }
        long timestampBase = batch.baseTimestamp();
        Long logAppendTime = batch.isLogAppendTime() ? batch.maxTimestamp() : null;
        ByteBuffer records;
        try {
            records = batch.compression() == BatchCompression.NONE ? block : ByteBuffer.wrap(uncompressed(batch, block));
        } catch (IOException | RuntimeException e) {
            throw new CorruptRecordException("Batch " + batch.range() + " does not decompress with "
                + batch.compression() + ": " + e, e);
        }
        List<StoredRecord> result = new ArrayList<>(Math.min(count, 1 << 16));
        try {
            for (int i = 0; i < count; i++) {
                result.add(read(records, batch.baseOffset(), timestampBase, logAppendTime));
            }
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            throw new CorruptRecordException("Batch " + batch.range() + " has fewer than the " + count
                + " records its header counts, or a malformed one: " + e);
        }
        return result;
    }

    private static byte[] uncompressed(StoredBatch batch, ByteBuffer block) throws IOException {
        try (InputStream in = batch.compression().decompress(block)) {
            return in.readAllBytes();
        }
    }

    private static StoredRecord read(ByteBuffer records, long baseOffset, long baseTimestamp, Long logAppendTime) {
        int bodySize = Varints.readVarint(records);
        if (bodySize < 0 || bodySize > records.remaining()) {
            throw new IllegalArgumentException("record body of " + bodySize + " bytes with " + records.remaining() + " left");
        }
        ByteBuffer body = records.slice(records.position(), bodySize);
        records.position(records.position() + bodySize);
        body.get(); // attributes: unused by every format so far
        long timestampDelta = Varints.readVarlong(body);
        int offsetDelta = Varints.readVarint(body);
        ByteBuffer key = bytes(body);
        ByteBuffer value = bytes(body);
        int headerCount = Varints.readVarint(body);
        if (headerCount < 0) {
            throw new IllegalArgumentException("negative header count " + headerCount);
        }
        List<Header> headers = new ArrayList<>(Math.min(headerCount, body.remaining()));
        for (int i = 0; i < headerCount; i++) {
            ByteBuffer headerKey = bytes(body);
            if (headerKey == null) {
                throw new IllegalArgumentException("a header with a null key");
            }
            ByteBuffer headerValue = bytes(body);
            headers.add(new Header(StandardCharsets.UTF_8.decode(headerKey).toString(), array(headerValue)));
        }
        if (body.hasRemaining()) {
            throw new IllegalArgumentException(body.remaining() + " bytes left after the record's headers");
        }
        long timestamp = logAppendTime != null ? logAppendTime : baseTimestamp + timestampDelta;
        return new StoredRecord(baseOffset + offsetDelta, timestamp, key, value, headers);
    }

    /** A varint-length byte field; null for length -1. */
    private static ByteBuffer bytes(ByteBuffer body) {
        int length = Varints.readVarint(body);
        if (length < 0) {
            return null;
        }
        if (length > body.remaining()) {
            throw new BufferUnderflowException();
        }
        ByteBuffer field = body.slice(body.position(), length).asReadOnlyBuffer();
        body.position(body.position() + length);
        return field;
    }

    private static byte[] array(ByteBuffer field) {
        if (field == null) {
            return null;
        }
        byte[] bytes = new byte[field.remaining()];
        field.duplicate().get(bytes);
        return bytes;
    }
}
