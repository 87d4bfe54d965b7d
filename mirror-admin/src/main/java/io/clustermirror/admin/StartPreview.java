package io.clustermirror.admin;

import io.clustermirror.common.PartitionState;

/**
 * What starting one stopped partition again would do to its log if it ran now. Before mirroring resumes, the log is cut
 * where the recorded lineage says it stops matching the source: at the source's barrier when the source had mirrored the
 * partition from this cluster and stopped (failback: what the source copied is kept), else at this mirror's own stop
 * barrier (the barrier goes too). Without either barrier the start compares the logs batch by batch and cuts at the
 * first difference, which only the start itself finds. When nothing is appended in between, a start truncates exactly
 * {@code [truncateFromOffset, truncateToOffset)}.
 *
 * @param state                this mirror's last recorded state of the partition, UNKNOWN if none
 * @param barrierOffset        this mirror's stop barrier, or -1
 * @param sourceBarrierOffset  the source's barrier from its stop of mirroring the partition from this cluster, or -1
 * @param destinationEndOffset the log's end (high watermark), or -1 if it cannot be read now
 * @param cut                  what decides the cut
 * @param truncateFromOffset   first offset the start would remove, or -1 when it would remove nothing or is not known
 * @param truncateToOffset     end (exclusive) of that range, or -1
 * @param recordsToTruncate    the data records in that range: those written since the stop, which
 *                             {@code discardLocalWrites} must allow
 */
public record StartPreview(String topic, int partition, PartitionState state, long barrierOffset, long sourceBarrierOffset,
                           long destinationEndOffset, Cut cut, long truncateFromOffset, long truncateToOffset,
                           long recordsToTruncate) {

    /** What decides where the start cuts the log. */
    public enum Cut {
        /** Nothing to cut: the log is empty or ends at the barrier. */
        NONE,
        /** This mirror's stop barrier. */
        BARRIER,
        /** The source's barrier (failback). */
        SOURCE_BARRIER,
        /** No barrier: the start compares the logs batch by batch; the range is not known before. */
        BATCH_COMPARISON
    }

    /** True if the start would remove records (or markers) from this partition. */
    public boolean truncates() {
        return truncateFromOffset >= 0;
    }

    /** The same preview with the records counted in its range. */
    public StartPreview withRecordsToTruncate(long records) {
        return new StartPreview(topic, partition, state, barrierOffset, sourceBarrierOffset, destinationEndOffset, cut,
            truncateFromOffset, truncateToOffset, records);
    }
}
