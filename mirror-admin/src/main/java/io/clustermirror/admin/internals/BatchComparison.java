package io.clustermirror.admin.internals;

import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.batch.StoredRecord;
import org.apache.kafka.common.KafkaException;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;

/**
 * The comparison behind {@code --verify} (pure): the source's and the destination's batches of one partition, pair by
 * pair. Two batches are the same when all their bytes are, except the 4-byte partition leader epoch (outside the CRC,
 * and stamped by each cluster's own leader). Each side's CRC is checked against its own bytes, so a batch changed after
 * it was written is named even when the other side holds the same corruption. Records are decoded only to explain a
 * difference in the record data.
 */
public final class BatchComparison {
    private BatchComparison() {
    }

    /** Where two logs first differ: the offset a reader should look at, and what differs there. */
    public record Difference(long offset, String description) {
    }

    /**
     * The result of comparing one partition over {@code [verifiedFrom, verifiedTo)}.
     *
     * @param difference the first difference, or null if every batch of the range is the same on both sides
     * @param batches    the batch pairs compared (up to the first difference)
     * @param bytes      the bytes of the source's batches compared
     */
    public record Outcome(long verifiedFrom, long verifiedTo, Difference difference, long batches, long bytes) {
        public boolean identical() {
            return difference == null;
        }
    }

    /**
     * Compares two logs over {@code [from, to)}: the batches of each side holding an offset in the range, in offset
     * order (batches ending before {@code from} are skipped; the first may start before it). Consumes the iterators up
     * to the first difference.
     */
    public static Outcome compare(Iterator<StoredBatch> source, Iterator<StoredBatch> destination, long from, long to) {
        long batches = 0;
        long bytes = 0;
        if (from >= to) {
            return new Outcome(from, Math.max(from, to), null, 0, 0);
        }
        while (true) {
            StoredBatch s = nextInRange(source, from, to);
            StoredBatch d = nextInRange(destination, from, to);
            if (s == null && d == null) {
                return new Outcome(from, to, null, batches, bytes);
            }
            Difference difference;
            if (s == null) {
                difference = new Difference(d.baseOffset(), "the source has no batch at offset " + d.baseOffset()
                    + " (its log ends or starts after it) while the destination has batch " + d.range());
            } else if (d == null) {
                difference = new Difference(s.baseOffset(), "the destination has no batch at offset " + s.baseOffset()
                    + " (its log ends or starts after it) while the source has batch " + s.range());
            } else {
                difference = compare(s, d);
            }
            if (difference != null) {
                return new Outcome(from, to, difference, batches, bytes);
            }
            batches++;
            bytes += s.sizeInBytes();
        }
    }

    /**
     * Compares one pair of batches.
     *
     * @return null if they hold the same bytes but for the partition leader epoch and both match their CRC
     */
    public static Difference compare(StoredBatch source, StoredBatch destination) {
        Difference corrupt = crcFailure("destination", destination);
        if (corrupt == null) {
            corrupt = crcFailure("source", source);
        }
        if (corrupt != null) {
            return corrupt;
        }
        long offset = Math.min(source.baseOffset(), destination.baseOffset());
        StoredBatch s = source;
        StoredBatch d = destination;
        List<String> fields = new ArrayList<>();
        field(fields, "base offset", s.baseOffset(), d.baseOffset());
        field(fields, "last offset", s.lastOffset(), d.lastOffset());
        field(fields, "magic", s.magic(), d.magic());
        if (!fields.isEmpty() || !s.isV2()) {
            // Different batches, or legacy ones (no leader epoch field): the bytes must match whole.
            return fields.isEmpty() && source.bytes().equals(destination.bytes()) ? null
                : new Difference(offset, "source batch " + source.range() + " and destination batch " + destination.range()
                + " differ" + (fields.isEmpty() ? " in their bytes" : ": " + String.join(", ", fields)));
        }
        field(fields, "crc", hex(s.checksum()), hex(d.checksum()));
        field(fields, "producer id", s.producerId(), d.producerId());
        field(fields, "producer epoch", s.producerEpoch(), d.producerEpoch());
        field(fields, "base sequence", s.baseSequence(), d.baseSequence());
        field(fields, "attributes", hex(s.attributes()), hex(d.attributes()));
        field(fields, "record count", s.recordCount(), d.recordCount());
        field(fields, "size", s.sizeInBytes(), d.sizeInBytes());
        field(fields, "base timestamp", s.baseTimestamp(), d.baseTimestamp());
        field(fields, "max timestamp", s.maxTimestamp(), d.maxTimestamp());
        boolean recordsEqual = recordBytes(source).equals(recordBytes(destination));
        if (fields.isEmpty() && recordsEqual) {
            return null;
        }
        String what = "batch " + source.range() + " differs: " + (fields.isEmpty() ? "" : String.join(", ", fields));
        if (!recordsEqual) {
            Difference record = firstDifferentRecord(s, d);
            String records = record != null ? record.description() : "the record data";
            return new Difference(record != null ? record.offset() : offset, what + (fields.isEmpty() ? "" : "; ") + records);
        }
        return new Difference(offset, what);
    }

    private static StoredBatch nextInRange(Iterator<StoredBatch> batches, long from, long to) {
        while (batches.hasNext()) {
            StoredBatch batch = batches.next();
            if (batch.baseOffset() >= to) {
                return null;
            }
            if (batch.lastOffset() >= from) {
                return batch;
            }
        }
        return null;
    }

    private static Difference crcFailure(String side, StoredBatch batch) {
        if (!batch.isV2()) {
            return batch.isValid() ? null : new Difference(batch.baseOffset(), side + " batch " + batch.range()
                + " is corrupt: it fails its CRC or size check");
        }
        long computed = batch.computeChecksum();
        long stored = batch.checksum();
        return computed == stored ? null : new Difference(batch.baseOffset(), side + " batch " + batch.range() + " fails its "
            + "CRC check (stored " + hex(stored) + ", computed " + hex(computed) + "): its bytes changed after it was written");
    }

    /** Everything the CRC covers after the header's fixed fields: the records. */
    private static ByteBuffer recordBytes(StoredBatch batch) {
        return batch.bytes().position(StoredBatch.RECORDS_OFFSET);
    }

    /**
     * The first record that differs between two valid batches of the same offsets, decoded (decompressed) only now; null
     * when the records cannot be decoded or hold the same values (the difference is then in their encoding).
     */
    private static Difference firstDifferentRecord(StoredBatch source, StoredBatch destination) {
        try {
            Iterator<StoredRecord> s = source.records().iterator();
            Iterator<StoredRecord> d = destination.records().iterator();
            while (s.hasNext() && d.hasNext()) {
                StoredRecord a = s.next();
                StoredRecord b = d.next();
                List<String> differing = new ArrayList<>();
                addIf(differing, "offset", a.offset() != b.offset());
                addIf(differing, "timestamp", a.timestamp() != b.timestamp());
                addIf(differing, "key", !Objects.equals(a.key(), b.key()));
                addIf(differing, "value", !Objects.equals(a.value(), b.value()));
                addIf(differing, "headers", !a.headers().equals(b.headers()));
                if (!differing.isEmpty()) {
                    return new Difference(Math.min(a.offset(), b.offset()), "record at offset " + a.offset() + " differs in its "
                        + String.join(", ", differing));
                }
            }
            return s.hasNext() || d.hasNext() ? new Difference(source.lastOffset(), "one side has more records") : null;
        } catch (KafkaException e) {
            return null;
        }
    }

    private static void field(List<String> fields, String name, Object source, Object destination) {
        if (!Objects.equals(source, destination)) {
            fields.add(name + " " + source + " (source) vs " + destination + " (destination)");
        }
    }

    private static void addIf(List<String> names, String name, boolean differs) {
        if (differs) {
            names.add(name);
        }
    }

    private static String hex(long crc) {
        return String.format("0x%08x", crc);
    }

    private static String hex(short attributes) {
        return String.format("0x%04x", attributes);
    }
}
