package io.clustermirror.admin;

import io.clustermirror.common.PartitionState;

/**
 * How far one destination partition is from the source, as a planned stop ({@link MirrorTopicsOptions#planned}) sees
 * it: both sides' offsets read at the same moment, each {@link MirrorPartitionDescription#UNKNOWN} (-1) if it could not
 * be read. The partition has caught up when the destination's last stable offset has reached the source's end and
 * nothing is open on the destination: everything the source holds is mirrored and settled, and a stop truncates nothing.
 *
 * @param sourceLastStableOffset      the source's last stable offset: below its end while a transaction is open there
 * @param sourceEndOffset             the source's high watermark
 * @param destinationEndOffset        the destination's high watermark
 * @param destinationLastStableOffset the destination's last stable offset, where a stop would truncate from
 * @param lagMs                       the partition's lag in milliseconds as its leader last recorded it
 *                                    ({@link MirrorPartitionDescription#lagMs}), -1 if unknown
 */
public record PartitionCatchUp(String topic, int partition, PartitionState state, long sourceLastStableOffset,
                               long sourceEndOffset, long destinationEndOffset, long destinationLastStableOffset, long lagMs) {

    /** True if every offset is known. */
    public boolean known() {
        return sourceLastStableOffset >= 0 && sourceEndOffset >= 0 && destinationEndOffset >= 0 && destinationLastStableOffset >= 0;
    }

    /** True if the destination holds all the source holds, settled: a stop now would truncate nothing and lose nothing. */
    public boolean caughtUp() {
        return known() && destinationLastStableOffset >= sourceEndOffset && destinationLastStableOffset == destinationEndOffset;
    }

    /**
     * True if the partition is MIRRORING and has caught up: what a start that waits
     * ({@link MirrorTopicsOptions#waitUntilCaughtUp}) waits for. A partition that has not begun mirroring yet may already
     * hold all the source holds (an empty topic), so its state counts too.
     */
    public boolean mirroringAndCaughtUp() {
        return state == PartitionState.MIRRORING && caughtUp();
    }

    /**
     * The offsets the destination still has to mirror or settle, {@code sourceEndOffset - destinationLastStableOffset}
     * (never negative), or -1 if unknown.
     */
    public long lag() {
        return known() ? Math.max(0, sourceEndOffset - destinationLastStableOffset) : MirrorPartitionDescription.UNKNOWN;
    }

    /** True if a transaction is open on the source: it holds the source's last stable offset below its end. */
    public boolean sourceTransactionOpen() {
        return known() && sourceLastStableOffset < sourceEndOffset;
    }

    /** Why the partition has not caught up, for the operator; empty if it has. */
    public String behindBecause() {
        if (caughtUp()) {
            return "";
        }
        String where = where();
        if (!known()) {
            return where + ": offsets unknown (source end " + sourceEndOffset + ", destination end " + destinationEndOffset
                + "): a side has no leader or cannot be read";
        }
        String behind = lag() + " offset(s)" + (lagMs >= 0 ? " and " + lagMs + " ms" : "");
        String offsets = behind + " behind (source last stable offset " + sourceLastStableOffset + ", end "
            + sourceEndOffset + "; destination last stable offset " + destinationLastStableOffset + ", end " + destinationEndOffset + ")";
        return where + ": " + offsets + (sourceTransactionOpen() ? "; a transaction is open on the source from offset "
            + sourceLastStableOffset + ": end it (commit, abort, or wait for its transaction.timeout.ms)" : "");
    }

    /** Why the partition is not {@link #mirroringAndCaughtUp() MIRRORING and caught up}, for the operator; empty if it is. */
    public String notMirroringAndCaughtUpBecause() {
        return caughtUp() && state != PartitionState.MIRRORING ? where() + ": caught up but not MIRRORING yet" : behindBecause();
    }

    private String where() {
        return topic + "-" + partition + " (" + state + ")";
    }
}
