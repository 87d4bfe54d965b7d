package io.clustermirror.broker.fetch;

import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.records.PartitionStateRecord;

import java.util.Optional;

/**
 * How old the source records a destination partition does not have yet are (pure): the source timestamp of the oldest of
 * them, from the batches the fetcher or a probe sees, or {@link PartitionStateRecord#NOTHING_UNMIRRORED} when the
 * destination has everything up to the source's end. The lag in milliseconds is the age of that timestamp.
 *
 * <p>Source timestamps are the producers' clocks (CreateTime) or the source leader's (LogAppendTime), so the lag is as
 * exact as those clocks agree with the one that reads it; it is never negative.
 */
public final class UnmirroredRecords {
    private UnmirroredRecords() {
    }

    /**
     * The timestamp of a batch's first record: the batch's base timestamp, or for LogAppendTime its max timestamp (the
     * source leader's append time, which every record of the batch has).
     */
    public static long firstTimestamp(StoredBatch batch) {
        return batch.isV2() && !batch.isLogAppendTime() ? batch.baseTimestamp() : batch.maxTimestamp();
    }

    /**
     * After a fetch response was appended: nothing when the destination reached the source's end, otherwise the newest
     * timestamp of the last appended batch (the records after it were written no earlier, so the age it gives is at most
     * the time between two source batches too high).
     *
     * @param fetchOffset the destination's end after the append
     * @param sourceEnd   the source's end in the response (high watermark, or last stable offset)
     */
    static long afterAppend(long fetchOffset, long sourceEnd, long lastAppendedTimestamp) {
        return fetchOffset >= sourceEnd ? PartitionStateRecord.NOTHING_UNMIRRORED : lastAppendedTimestamp;
    }

    /**
     * After a probe of the source at the destination's end (a partition that does not fetch): the timestamp of the first
     * batch there, nothing when the destination is at the source's end.
     *
     * @param destinationEnd the destination's log end offset
     * @param sourceEnd      the source's end offset the probe saw
     * @param firstBatch     the source's first batch holding an offset at or past {@code destinationEnd}, if any
     */
    public static long atProbe(long destinationEnd, long sourceEnd, Optional<StoredBatch> firstBatch) {
        if (destinationEnd >= sourceEnd || firstBatch.isEmpty()) {
            return PartitionStateRecord.NOTHING_UNMIRRORED;
        }
        return firstTimestamp(firstBatch.get());
    }

    /** The age in milliseconds of the oldest unmirrored record at {@code nowMs}; 0 when there is none. */
    public static long lagMs(long oldestUnmirroredTimestamp, long nowMs) {
        return oldestUnmirroredTimestamp < 0 ? 0 : Math.max(0, nowMs - oldestUnmirroredTimestamp);
    }
}
