package io.clustermirror.broker.partition;

import io.clustermirror.common.PartitionState;
import io.clustermirror.common.records.PartitionStateRecord;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * What PREPARING knows, from the recorded lineage alone, about where a destination log that already holds data stops
 * matching its source in PREPARING. Pure: the caller gathers the facts, then confirms a proposed cut against
 * the logs' batches, or searches the batches when the lineage says nothing ({@link LogComparison}).
 *
 * <ul>
 *   <li>An empty log: {@link Keep}. (A leader change of a partition past PREPARING continues without a plan.)</li>
 *   <li>A log this mirror was mirroring into that failed (a fetch or append failure, e.g. a write that did not come
 *       from the mirror, such as an abort marker a client sent with WriteTxnMarkers): {@link Compare}, which reads only
 *       the end of the logs when they match and cuts what another writer appended.</li>
 *   <li>Failback: the source mirrored this partition from us and stopped; its log equals ours up to its barrier, and
 *       up to where our epoch of its last mirrored batch ends, if that is earlier (our log moved on after an unclean
 *       election): {@link Propose}.</li>
 *   <li>A restart of a mirror after its own stop: the log equals the source's up to our own barrier: {@link Propose}.</li>
 *   <li>Anything else, in particular a lineage that is missing or incomplete (a state record lost or not loaded yet):
 *       {@link Compare}. Never "everything goes": only a proven difference truncates.</li>
 * </ul>
 */
final class LogAlignment {
    private LogAlignment() {
    }

    /** What to do with the log before mirroring into it. */
    sealed interface Plan {
    }

    /** Nothing must go: fetch from the log end. */
    record Keep() implements Plan {
    }

    /** The lineage proves a difference from {@code cut.offset()} on; confirm it against the batches, then truncate. */
    record Propose(Cut cut) implements Plan {
    }

    /** No lineage: compare the batches to find what, if anything, differs. */
    record Compare() implements Plan {
    }

    /**
     * @param own              this mirror's last recorded state of the partition, if any
     * @param fromUs           the source's record of mirroring this partition from this cluster, if any
     * @param ourEndOfTheirLme where our log's epoch {@code fromUs.lastMirroredEpoch()} ends, if known
     */
    static Plan plan(long logStart, long logEnd, Optional<PartitionStateRecord> own, Optional<PartitionStateRecord> fromUs,
                     OptionalLong ourEndOfTheirLme) {
        if (logEnd <= logStart) {
            return new Keep();
        }
        if (own.map(LogAlignment::mirroredInto).orElse(false)) {
            return new Compare();
        }
        if (fromUs.isPresent() && fromUs.get().barrierOffset() >= 0) {
            long barrier = fromUs.get().barrierOffset();
            if (ourEndOfTheirLme.isPresent() && ourEndOfTheirLme.getAsLong() < barrier) {
                return propose(logStart, logEnd, new Cut(ourEndOfTheirLme.getAsLong(), Cut.Evidence.SOURCE_EPOCH_LINEAGE,
                    "the source mirrored up to its barrier at " + barrier + " in our leader epoch "
                        + fromUs.get().lastMirroredEpoch() + ", which ends at " + ourEndOfTheirLme.getAsLong() + " in our log"));
            }
            return propose(logStart, logEnd, new Cut(barrier, Cut.Evidence.BARRIER,
                "the source stopped mirroring this partition from us with its barrier at offset " + barrier));
        }
        if (own.isPresent() && own.get().barrierOffset() >= 0) {
            long barrier = own.get().barrierOffset();
            return propose(logStart, logEnd, new Cut(barrier, Cut.Evidence.BARRIER,
                "this mirror stopped the partition with its barrier at offset " + barrier));
        }
        return new Compare();
    }

    /** A cut within the log, or none when the log ends at or below it. */
    private static Plan propose(long logStart, long logEnd, Cut cut) {
        if (cut.offset() >= logEnd) {
            return new Keep();
        }
        return new Propose(new Cut(Math.max(logStart, cut.offset()), cut.evidence(), cut.proof()));
    }

    /** This mirror fetched into the partition: it got past PREPARING, or recorded a mirrored offset, and is not stopped. */
    static boolean mirroredInto(PartitionStateRecord own) {
        return own.state() != PartitionState.STOPPED
            && (own.lastMirroredOffset() >= 0 || PartitionStateMachine.RECORDED_ALIGNED.contains(own.state()));
    }
}
