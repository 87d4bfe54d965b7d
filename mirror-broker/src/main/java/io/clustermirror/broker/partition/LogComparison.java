package io.clustermirror.broker.partition;

import io.clustermirror.common.barrier.BarrierBatch;
import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.cleaning.CleanedBatches;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Where a destination log stops matching its source, proven from the two logs' batches alone. Pure: the caller
 * supplies both logs through {@link BatchReader}s.
 *
 * <p>A v2 batch's CRC covers everything but its first 17 bytes (offset, length, partition leader epoch, magic), so
 * a mirrored batch, which the destination stamps with its own leader epoch, still has the source's CRC. Each
 * destination batch is one of:
 * <ul>
 *   <li><b>identical</b>: the source holds a batch with the same base and last offsets and the same CRC, or the same
 *       batch as the log cleaner left it (same offsets and producer fields, and every record both still hold is the
 *       same: key, value, headers, timestamp);</li>
 *   <li><b>different</b>: the source holds other data at those offsets, or the batch is a MIRROR_PID_RESET barrier
 *       the source does not hold (a barrier this cluster wrote when it stopped mirroring is never source data);</li>
 *   <li><b>unproven</b>: the source holds nothing at those offsets (below its log start, in a gap the cleaner left,
 *       or above its end, which may only lag): no evidence either way.</li>
 * </ul>
 * Two logs that once differ never hold identical batches again (a batch's CRC covers its producer, timestamps and
 * records), so the logs match up to the last identical batch and the first different batch after it proves the
 * divergence. Only a different batch may ever cause a truncation; unproven batches are kept.
 */
final class LogComparison {
    /** Smallest window, in offsets, read from the end of the destination log per step of the backward search. */
    static final long FIRST_WINDOW = 64;

    private LogComparison() {
    }

    /** Reads the batches of one log that hold offsets in {@code [from, to)}, in offset order. */
    interface BatchReader {
        List<StoredBatch> batches(long from, long to) throws Exception;
    }

    /**
     * What a comparison proved.
     *
     * @param lastIdenticalEnd   the end (exclusive) of the last identical batch found, or -1 if none was found
     * @param sourceEpoch        the source's leader epoch of that batch, or -1
     * @param firstDifferent     the base offset of the first different batch after it, or -1 if none (nothing is
     *                           proven to differ: the destination log must not be truncated)
     * @param difference         what differs there, for the operator's log line; null when nothing differs
     */
    record Result(long lastIdenticalEnd, int sourceEpoch, long firstDifferent, String difference) {
        boolean diverged() {
            return firstDifferent >= 0;
        }
    }

    /**
     * Searches backwards from the destination's end, in windows that grow fourfold, for the last identical batch, and
     * reports the first different batch after it. Reads only the end of the logs when they match (the common case).
     *
     * @param floor          no batch below this offset is compared (the destination's log start, or an offset whose
     *                       divergence is already proven)
     * @param destinationEnd the destination's log end offset
     */
    static Result search(long floor, long destinationEnd, BatchReader destination, BatchReader source) throws Exception {
        long firstDifferent = -1;
        String difference = null;
        long hi = destinationEnd;
        long window = FIRST_WINDOW;
        while (hi > floor) {
            long lo = Math.max(floor, hi - window);
            long windowStart = lo;
            // A batch that straddles the window's start belongs to the next window, unless no window comes after.
            List<StoredBatch> dest = destination.batches(lo, hi).stream()
                .filter(b -> b.baseOffset() >= windowStart || windowStart == floor).toList();
            Sources src = Sources.read(source, dest);
            for (int i = dest.size() - 1; i >= 0; i--) {
                StoredBatch d = dest.get(i);
                Verdict v = src.classify(d);
                if (v.kind == Kind.IDENTICAL) {
                    return new Result(d.nextOffset(), v.source.partitionLeaderEpoch(), firstDifferent, difference);
                }
                if (v.kind == Kind.DIFFERENT) {
                    firstDifferent = d.baseOffset();
                    difference = v.why;
                }
            }
            hi = lo;
            window = window >= Long.MAX_VALUE / 4 ? Long.MAX_VALUE : window * 4;
        }
        return new Result(-1, -1, firstDifferent, difference);
    }

    /**
     * Checks a truncation offset proposed by other evidence (the source's epoch lineage or a barrier): the first
     * destination batch at or after {@code offset} must not be identical to the source's. Since logs that differ
     * once never match again, one batch confirms the proposal.
     *
     * @return empty when the proposal holds (or no batch lies at or after the offset); otherwise the evidence
     *         that the logs match there, for the caller to fall back to {@link #search}
     */
    static Optional<String> contradicts(long offset, long destinationEnd, BatchReader destination, BatchReader source)
            throws Exception {
        long window = FIRST_WINDOW;
        for (long lo = offset; lo < destinationEnd; lo += window, window *= 4) {
            List<StoredBatch> dest = destination.batches(lo, Math.min(destinationEnd, lo + window));
            if (!dest.isEmpty()) {
                StoredBatch first = dest.get(0);
                Verdict v = Sources.read(source, List.of(first)).classify(first);
                return v.kind == Kind.IDENTICAL
                    ? Optional.of("the batch at offsets [" + first.baseOffset() + ", " + first.lastOffset()
                        + "] is identical on both sides (CRC " + first.checksum() + ")")
                    : Optional.empty();
            }
        }
        return Optional.empty();
    }

    private enum Kind { IDENTICAL, DIFFERENT, UNPROVEN }

    private record Verdict(Kind kind, StoredBatch source, String why) {
    }

    /** The source batches covering a run of destination batches, by base offset. */
    private static final class Sources {
        private final Map<Long, StoredBatch> byBase = new HashMap<>();
        private final List<StoredBatch> all;

        private Sources(List<StoredBatch> all) {
            this.all = all;
            all.forEach(b -> byBase.put(b.baseOffset(), b));
        }

        static Sources read(BatchReader source, List<StoredBatch> dest) throws Exception {
            if (dest.isEmpty()) {
                return new Sources(List.of());
            }
            return new Sources(source.batches(dest.get(0).baseOffset(), dest.get(dest.size() - 1).nextOffset()));
        }

        Verdict classify(StoredBatch d) {
            StoredBatch s = byBase.get(d.baseOffset());
            if (s != null && s.lastOffset() == d.lastOffset() && s.checksum() == d.checksum()) {
                return new Verdict(Kind.IDENTICAL, s, null);
            }
            if (s != null && CleanedBatches.sameAfterCleaning(d, s)) {
                return new Verdict(Kind.IDENTICAL, s, null);
            }
            for (StoredBatch other : all) {
                if (other.baseOffset() <= d.lastOffset() && other.lastOffset() >= d.baseOffset()) {
                    return new Verdict(Kind.DIFFERENT, other, "the destination's batch at offsets [" + d.baseOffset() + ", "
                        + d.lastOffset() + "] (CRC " + d.checksum() + ") differs from the source's at [" + other.baseOffset()
                        + ", " + other.lastOffset() + "] (CRC " + other.checksum() + ")");
                }
            }
            if (BarrierBatch.isBarrier(d)) {
                return new Verdict(Kind.DIFFERENT, null, "the destination holds a MIRROR_PID_RESET barrier at offset "
                    + d.baseOffset() + " that the source does not hold");
            }
            return new Verdict(Kind.UNPROVEN, null, null);
        }
    }
}
