package io.clustermirror.broker.bridge;

/**
 * Outcome of appending source batches on the destination leader.
 *
 * @param firstOffset  base offset of the first batch appended, or -1 if nothing was appended
 * @param lastOffset   last offset of the last batch appended, or -1
 * @param logEndOffset the leader's log end offset after the append
 */
public record AppendResult(long firstOffset, long lastOffset, long logEndOffset) {
}
