package io.clustermirror.admin.internals;

import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.batch.TransactionMarker;
import org.apache.kafka.common.TopicPartition;

import java.util.List;

/**
 * What the end of one destination partition's log holds, batch by batch, as far as transactions go: the input of
 * {@link TransactionCuts}. The batches cover {@code [windowStart, end)}, in order.
 *
 * <p>Invariant: {@code windowStart <= lastStableOffset <= end}.
 *
 * @param windowStart      where the batches begin: a transaction whose first batch here has no earlier batch of its
 *                         producer may have begun before it, unless {@code atLogStart}
 * @param windowFromMs     the record time from which the window holds every record of the partition (the time the window
 *                         was chosen by; records written later than it lie in the window), or -1 when not known
 * @param atLogStart       true if {@code windowStart} is the log start: nothing lies before it
 * @param lastStableOffset where a plain stop would cut: the first offset of the oldest transaction open here, or the end
 * @param end              the log end offset
 * @param batches          the batches of {@code [windowStart, end)}
 */
public record PartitionTail(TopicPartition tp, long windowStart, long windowFromMs, boolean atLogStart, long lastStableOffset,
                            long end, List<Batch> batches) {
    public PartitionTail {
        if (windowStart > lastStableOffset || lastStableOffset > end) {
            throw new IllegalArgumentException(tp + ": a tail needs windowStart <= lastStableOffset <= end: " + windowStart + ", "
                + lastStableOffset + ", " + end);
        }
        batches = List.copyOf(batches);
    }

    /**
     * One batch, reduced to what the cut needs.
     *
     * @param marker      for a transaction marker: true for COMMIT, false for ABORT; null for any other batch
     * @param dataRecords the data records of the batch (0 for a control batch)
     */
    public record Batch(long baseOffset, long lastOffset, long producerId, short producerEpoch, boolean transactional,
                        Boolean marker, int dataRecords) {
        /** The batch as the cut sees it. */
        public static Batch of(StoredBatch b) {
            Boolean marker = b.isControlBatch() ? TransactionMarker.of(b).map(TransactionMarker::commit).orElse(null) : null;
            int records = b.isControlBatch() ? 0 : b.isV2() ? b.recordCount() : (int) (b.lastOffset() - b.baseOffset() + 1);
            return new Batch(b.baseOffset(), b.lastOffset(), b.producerId(), b.producerEpoch(), b.isTransactional(), marker, records);
        }

        boolean isTransactionData() {
            return transactional && marker == null && dataRecords > 0;
        }
    }
}
