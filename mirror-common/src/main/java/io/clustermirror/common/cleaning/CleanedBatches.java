package io.clustermirror.common.cleaning;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Batches of a compacted log as two clusters' log cleaners leave them. Each cluster cleans its copy on its own
 * schedule, so a mirrored batch may lose records on one side only; what both sides still hold must not differ. Used by
 * the mirror's log comparison and by test tools that check a compacted mirror topic.
 */
public final class CleanedBatches {
    private CleanedBatches() {
    }

    /**
     * The same batch after the log cleaner removed records on one side or both: it keeps the base and last offsets
     * and the producer fields of a v2 batch and rewrites the records it retains unchanged, so every record both
     * batches still hold is the same (key, value, headers, timestamp).
     */
    public static boolean sameAfterCleaning(RecordBatch a, RecordBatch b) {
        if (a.magic() < RecordBatch.MAGIC_VALUE_V2 || b.magic() < RecordBatch.MAGIC_VALUE_V2
            || a.baseOffset() != b.baseOffset() || a.lastOffset() != b.lastOffset()
            || a.producerId() != b.producerId() || a.producerEpoch() != b.producerEpoch()
            || a.baseSequence() != b.baseSequence() || a.isTransactional() != b.isTransactional()
            || a.isControlBatch() != b.isControlBatch()) {
            return false;
        }
        Map<Long, Record> records = new HashMap<>();
        for (Record r : a) {
            records.put(r.offset(), r);
        }
        for (Record r : b) {
            Record other = records.get(r.offset());
            if (other != null && !sameRecord(r, other)) {
                return false;
            }
        }
        return true;
    }

    /** True if the two records have the same timestamp, key, value and headers (their offsets are the caller's). */
    public static boolean sameRecord(Record a, Record b) {
        return a.timestamp() == b.timestamp()
            && Objects.equals(a.key(), b.key())
            && Objects.equals(a.value(), b.value())
            && Arrays.equals(a.headers(), b.headers(), CleanedBatches::compareHeaders);
    }

    private static int compareHeaders(Header a, Header b) {
        return a.key().equals(b.key()) && Arrays.equals(a.value(), b.value()) ? 0 : 1;
    }
}
