package io.clustermirror.common.records;

import io.clustermirror.common.batch.TransactionMarker;

import java.util.List;

/**
 * Where a stop cuts a mirror partition's log, decided once by the first leader that runs the stop and recorded in
 * {@code __mirror_state} before anything is truncated. Every later attempt of the same stop (a retry, a new leader after
 * a crash, a shutdown, an election or a handover) cuts there again and never lower: a cut at the last stable offset can
 * remove the commit marker of a transaction that began below it, so the last stable offset that a later attempt reads
 * may lie below the first one, and cutting there would remove committed records.
 *
 * <p>The cut can remove an abort marker too: of a transaction that began below the cut and was aborted above it. Its
 * records below the cut would then read as committed once the barrier clears the producer state, so the stop writes
 * that abort again at the cut. Which markers those are is decided with the cut ({@code abortsPastCut}) because the range
 * that held them is gone after the truncation: each producer's first marker in the removed range, if it aborts. The
 * stop writes one only for a producer whose transaction is open after the truncation, one that began below the cut.
 *
 * <p>Invariant: {@code offset <= logEnd}; the range {@code [offset, logEnd)} is what the stop removes (empty when equal).
 *
 * @param offset       the new log end: the last stable offset of the leader that decided the cut, where the barrier goes
 * @param logEnd       the log end offset of that leader when it decided, the end of the range the stop removes
 * @param abortsPastCut the first marker of each producer in the removed range that is an ABORT, in log order (empty when
 *                     a stop recorded before these were kept is read)
 */
public record StopCut(long offset, long logEnd, List<TransactionMarker> abortsPastCut) {
    public StopCut {
        if (offset < 0 || logEnd < offset) {
            throw new IllegalArgumentException("a stop cut needs 0 <= offset <= logEnd: " + offset + ", " + logEnd);
        }
        abortsPastCut = abortsPastCut == null ? List.of() : List.copyOf(abortsPastCut);
        if (abortsPastCut.stream().anyMatch(TransactionMarker::commit)) {
            throw new IllegalArgumentException("a stop cut keeps abort markers only: " + abortsPastCut);
        }
    }

    /** A cut that removes no abort marker. */
    public StopCut(long offset, long logEnd) {
        this(offset, logEnd, List.of());
    }

    /** True if the stop removes records: the log ended above the cut. */
    public boolean removesRecords() {
        return offset < logEnd;
    }
}
