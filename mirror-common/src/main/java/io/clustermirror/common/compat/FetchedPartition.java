package io.clustermirror.common.compat;

import org.apache.kafka.common.protocol.Errors;

import java.nio.ByteBuffer;
import java.util.Optional;

/**
 * One partition of a consumer Fetch response, as the broker answered it.
 *
 * @param error            the partition's error, {@link Errors#NONE} if it has data
 * @param highWatermark    the leader's high watermark
 * @param lastStableOffset the leader's last stable offset (-1 when the broker did not say)
 * @param logStartOffset   the leader's log start offset (-1 when the broker did not say)
 * @param divergingEpoch   the end of the last epoch the fetcher and the leader share, when the fetch's last fetched
 *                         epoch diverged from the leader's log
 * @param records          the stored batches as the broker sent them (position to limit; a trailing partial batch
 *                         possible at the size limit), empty when none
 */
public record FetchedPartition(Errors error, long highWatermark, long lastStableOffset, long logStartOffset,
                               Optional<EpochEnd> divergingEpoch, ByteBuffer records) {
    /** The end offset of a leader epoch. */
    public record EpochEnd(int epoch, long endOffset) {
    }
}
