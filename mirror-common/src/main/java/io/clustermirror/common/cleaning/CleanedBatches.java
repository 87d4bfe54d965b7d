package io.clustermirror.common.cleaning;

import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.batch.StoredRecord;

import java.util.HashMap;
import java.util.Map;

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
    public static boolean sameAfterCleaning(StoredBatch a, StoredBatch b) {
        if (!a.isV2() || !b.isV2()
            || a.baseOffset() != b.baseOffset() || a.lastOffset() != b.lastOffset()
            || a.producerId() != b.producerId() || a.producerEpoch() != b.producerEpoch()
            || a.baseSequence() != b.baseSequence() || a.isTransactional() != b.isTransactional()
            || a.isControlBatch() != b.isControlBatch()) {
            return false;
        }
        Map<Long, StoredRecord> records = new HashMap<>();
        for (StoredRecord r : a.records()) {
            records.put(r.offset(), r);
        }
        for (StoredRecord r : b.records()) {
            StoredRecord other = records.get(r.offset());
            if (other != null && !r.sameContent(other)) {
                return false;
            }
        }
        return true;
    }
}
