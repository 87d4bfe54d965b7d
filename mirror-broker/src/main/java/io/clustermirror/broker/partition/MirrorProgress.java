package io.clustermirror.broker.partition;

import io.clustermirror.common.records.EpochStart;
import io.clustermirror.common.records.HeldLogStarts;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.StopCut;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What one leader knows of its partition's mirrored data beyond the state machine's value: the lineage (the last mirrored
 * offset and the source epoch it belongs to, where each source epoch began), the source's end, the barrier, the last
 * truncation, the age of the oldest record the destination lacks, the stop's cut and the held log-start moves. It is what
 * the partition's state record shows, and a new leader starts from that record. Owned by {@link PartitionShard}.
 *
 * <p>Invariant, kept by {@link #cutAt}: no lineage entry names an offset at or past a log end a procedure cut the log to,
 * so the fetcher never continues after a source epoch the log no longer holds.
 */
final class MirrorProgress {
    long lastMirroredOffset = -1;
    int lastMirroredEpoch = -1;
    List<EpochStart> sourceEpochs = new ArrayList<>();
    long sourceEndOffset = -1;
    long barrierOffset = -1;
    long truncatedFromOffset = -1;
    long truncatedToOffset = -1;
    /** The source timestamp of the oldest record the destination lacks, or {@link PartitionStateRecord#NOTHING_UNMIRRORED}. */
    long oldestUnmirroredTimestamp = PartitionStateRecord.NOTHING_UNMIRRORED;
    /** The cut of the stop under way, as its first attempt decided it; null while no stop has decided one. */
    StopCut stopCut;
    /** The moves of the source's log start the destination holds back, as the fetcher last reported them. */
    HeldLogStarts heldLogStarts = HeldLogStarts.NONE;

    /** What a new leader knows: its partition's record, as its predecessor left it (nothing if none). */
    static MirrorProgress restoredFrom(Optional<PartitionStateRecord> persisted) {
        MirrorProgress p = new MirrorProgress();
        persisted.ifPresent(r -> {
            p.lastMirroredOffset = r.lastMirroredOffset();
            p.lastMirroredEpoch = r.lastMirroredEpoch();
            p.sourceEpochs = new ArrayList<>(r.sourceEpochs());
            p.sourceEndOffset = r.sourceLogEndOffset();
            p.barrierOffset = r.barrierOffset();
            p.truncatedFromOffset = r.truncatedFromOffset();
            p.truncatedToOffset = r.truncatedToOffset();
            if (r.oldestUnmirroredTimestamp() != null) {
                p.oldestUnmirroredTimestamp = r.oldestUnmirroredTimestamp();
            }
            p.stopCut = r.stopCut();
            p.heldLogStarts = r.heldLogStarts();
        });
        return p;
    }

    /**
     * Reports the removal of {@code [from, to)}. A cut at the same offset again (a later attempt of a stop, on a replica
     * that had not followed the first) removes part of the same range: the report keeps the whole of it.
     */
    void truncated(long from, long to) {
        truncatedToOffset = truncatedFromOffset == from ? Math.max(truncatedToOffset, to) : to;
        truncatedFromOffset = from;
    }

    /** The fetcher mirrored up to {@code offset} from source epoch {@code epoch}, which began at {@code epochStart} (-1: not new). */
    void mirrored(long offset, int epoch, long epochStart) {
        lastMirroredOffset = offset;
        lastMirroredEpoch = epoch;
        if (epochStart >= 0 && (sourceEpochs.isEmpty() || sourceEpochs.get(sourceEpochs.size() - 1).epoch() != epoch)) {
            sourceEpochs.add(new EpochStart(epoch, epochStart));
        }
    }

    /**
     * An alignment or repair left the log ending at {@code logEnd}, with {@code lastEpoch} the source epoch the fetcher
     * continues after (-1: unknown, the fetcher learns it from the source).
     */
    void cutAt(long logEnd, int lastEpoch) {
        sourceEpochs.removeIf(e -> e.startOffset() >= logEnd);
        lastMirroredEpoch = lastEpoch;
        lastMirroredOffset = Math.min(lastMirroredOffset, logEnd - 1);
    }
}
