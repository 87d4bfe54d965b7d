package io.clustermirror.broker.bridge;

/**
 * A snapshot of a local leader replica's log.
 *
 * @param leaderEpoch      current destination leader epoch
 * @param logStartOffset   log start offset
 * @param logEndOffset     log end offset (next offset to append)
 * @param highWatermark    high watermark
 * @param lastStableOffset last stable offset
 */
public record LeaderLogState(int leaderEpoch, long logStartOffset, long logEndOffset, long highWatermark,
                             long lastStableOffset) {
}
