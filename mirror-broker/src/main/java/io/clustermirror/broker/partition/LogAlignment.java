package io.clustermirror.broker.partition;

import io.clustermirror.common.PartitionState;
import io.clustermirror.common.records.PartitionStateRecord;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * Where a destination log that already holds data must be cut before it mirrors from a source (seed 001,
 * PREPARING): the offset below which it provably equals the source's log. Pure: the caller gathers the facts.
 *
 * <ul>
 *   <li>An empty log, or one this mirror was already mirroring into (a leader change, a retry after a fetch
 *       failure): no cut. A retry after a failed preparation is no proof of that: the cut is computed again.</li>
 *   <li>Failback: the source mirrored this partition from us and stopped; its log equals ours up to its barrier,
 *       and up to where our epoch of its last mirrored batch ends, if that is earlier (our log moved on after an
 *       unclean election).</li>
 *   <li>A restart of a mirror after its own stop: the log equals the source's up to our own barrier.</li>
 *   <li>Anything else: nothing is known to match, so everything goes (mirroring starts from scratch).</li>
 * </ul>
 */
final class LogAlignment {
    private LogAlignment() {
    }

    /**
     * @param own              this mirror's last recorded state of the partition, if any
     * @param fromUs           the source's record of mirroring this partition from this cluster, if any
     * @param ourEndOfTheirLme where our log's epoch {@code fromUs.lastMirroredEpoch()} ends, if known
     * @return the offset to truncate to; {@code logEnd} when nothing must go
     */
    static long alignmentOffset(long logStart, long logEnd, Optional<PartitionStateRecord> own,
                                Optional<PartitionStateRecord> fromUs, OptionalLong ourEndOfTheirLme) {
        if (logEnd <= logStart || own.map(LogAlignment::mirroredInto).orElse(false)) {
            return logEnd;
        }
        if (fromUs.isPresent() && fromUs.get().barrierOffset() >= 0) {
            long matching = fromUs.get().barrierOffset();
            if (ourEndOfTheirLme.isPresent()) {
                matching = Math.min(matching, ourEndOfTheirLme.getAsLong());
            }
            return Math.max(logStart, Math.min(logEnd, matching));
        }
        if (own.isPresent() && own.get().barrierOffset() >= 0) {
            return Math.max(logStart, Math.min(logEnd, own.get().barrierOffset()));
        }
        return logStart;
    }

    /** This mirror fetched into the partition: it got past PREPARING, or recorded a mirrored offset, and is not stopped. */
    static boolean mirroredInto(PartitionStateRecord own) {
        return own.state() != PartitionState.STOPPED
            && (own.lastMirroredOffset() >= 0 || PartitionMirrorManager.PAST_PREPARING.contains(own.state()));
    }
}
