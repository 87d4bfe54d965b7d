package io.clustermirror.admin;

import io.clustermirror.common.PartitionState;

import java.util.List;

/**
 * What stopping one mirror partition (a failover) would do if it ran now: a stop truncates the destination log to its
 * last stable offset, so that no transaction of the source stays open, and writes the barrier after it. Computed from
 * the destination's own log, as the stop itself computes it; when nothing is appended in between, the stop truncates
 * exactly {@code [truncateFromOffset, truncateToOffset)}.
 *
 * @param destinationEndOffset the end of the destination log as replicated (its high watermark): the stop first waits
 *                             for the in-sync followers, then truncates from the last stable offset to there
 * @param lastStableOffset     the first offset of the oldest transaction still open on the destination, or its end
 * @param truncateFromOffset   first offset the stop would remove, or {@link MirrorPartitionDescription#UNKNOWN} (-1)
 *                             when it would remove nothing
 * @param truncateToOffset     end (exclusive) of the range it would remove, or -1 when nothing
 * @param recordsToTruncate    the records in that range (data records; transaction markers are not counted)
 * @param openProducerIds      the producer ids of the transactions open on the destination (mirrored from the source),
 *                             which are what the stop cuts
 * @param lagMs                the partition's lag in milliseconds ({@link MirrorPartitionDescription#lagMs()}): the age
 *                             of the oldest source record a stop now would leave behind, or -1 when unknown
 */
public record StopPreview(String topic, int partition, PartitionState state, long destinationEndOffset, long lastStableOffset,
                          long truncateFromOffset, long truncateToOffset, long recordsToTruncate, List<Long> openProducerIds,
                          long lagMs) {
    public StopPreview {
        openProducerIds = List.copyOf(openProducerIds);
    }

    /** A preview without the lag in milliseconds (unknown), as the API previewed stops before it. */
    public StopPreview(String topic, int partition, PartitionState state, long destinationEndOffset, long lastStableOffset,
                       long truncateFromOffset, long truncateToOffset, long recordsToTruncate, List<Long> openProducerIds) {
        this(topic, partition, state, destinationEndOffset, lastStableOffset, truncateFromOffset, truncateToOffset, recordsToTruncate,
            openProducerIds, MirrorPartitionDescription.UNKNOWN);
    }

    /** True if the stop would remove records (or markers) from this partition. */
    public boolean truncates() {
        return truncateFromOffset >= 0;
    }
}
