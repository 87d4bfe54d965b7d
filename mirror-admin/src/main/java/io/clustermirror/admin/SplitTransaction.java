package io.clustermirror.admin;

import java.util.List;

/**
 * A committed transaction of the source that a stop would split across the chosen partitions: after it,
 * {@code read_committed} consumers of the destination would read its records on some partitions and not (or not all of
 * them) on others. Found in the destination's mirrored data and, for a partition that mirrored none of its records, in
 * what the mirror kept of the source's transaction log (see {@link StopTransactions#limits()} for what neither shows).
 *
 * @param producerId    the transaction's producer id on the source
 * @param producerEpoch the producer epoch of its records
 * @param parts         what each partition holds of it, ordered by topic and partition
 */
public record SplitTransaction(long producerId, short producerEpoch, List<Part> parts) {
    public SplitTransaction {
        parts = List.copyOf(parts);
    }

    /**
     * One partition's part of the transaction.
     *
     * @param firstOffset    its first record here, or -1 when it began before the part of the log that was read, or when
     *                       none of its records here was mirrored ({@code lastDataOffset} -1 too: the source's
     *                       transaction log says it wrote here)
     * @param lastDataOffset its last record here
     * @param markerOffset   its commit marker here, or -1 when the destination does not hold it (yet)
     * @param keptRecords    its records here that the stop keeps
     * @param removedRecords its records here that the stop removes
     */
    public record Part(String topic, int partition, long firstOffset, long lastDataOffset, long markerOffset, long keptRecords,
                       long removedRecords) {
    }
}
