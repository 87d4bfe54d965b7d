package io.clustermirror.common.records;

/**
 * Where a stop cuts a mirror partition's log, decided once by the first leader that runs the stop and recorded in
 * {@code __mirror_state} before anything is truncated. Every later attempt of the same stop (a retry, a new leader after
 * a crash, a shutdown, an election or a handover) cuts there again and never lower: a cut at the last stable offset can
 * remove the commit marker of a transaction that began below it, so the last stable offset that a later attempt reads
 * may lie below the first one, and cutting there would remove committed records.
 *
 * <p>Invariant: {@code offset <= logEnd}; the range {@code [offset, logEnd)} is what the stop removes (empty when equal).
 *
 * @param offset the new log end: the last stable offset of the leader that decided the cut, where the barrier goes
 * @param logEnd the log end offset of that leader when it decided, the end of the range the stop removes
 */
public record StopCut(long offset, long logEnd) {
    public StopCut {
        if (offset < 0 || logEnd < offset) {
            throw new IllegalArgumentException("a stop cut needs 0 <= offset <= logEnd: " + offset + ", " + logEnd);
        }
    }

    /** True if the stop removes records: the log ended above the cut. */
    public boolean removesRecords() {
        return offset < logEnd;
    }
}
