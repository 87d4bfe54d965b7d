package io.clustermirror.admin;

/**
 * How far a long operation has come, as a {@link ProgressListener} is told: a wait for partitions to catch up
 * ({@link MirrorTopicsOptions#planned}, {@link MirrorTopicsOptions#waitUntilCaughtUp}) or an integrity check
 * ({@link ClusterMirrorAdmin#verifyMirrorTopics}). Invariants: {@code 0 <= partitionsDone <= partitionsTotal} and
 * {@code remainingOffsets >= 0}.
 *
 * @param partitionsDone   the partitions finished: caught up, or compared
 * @param partitionsTotal  the partitions the operation covers
 * @param remainingOffsets the offsets still to go over the partitions not finished: how far they are behind the source
 *                         (those whose offsets could not be read count for nothing), or how many a check has still to
 *                         compare (estimated from the destination's logs when the check began)
 */
public record OperationProgress(int partitionsDone, int partitionsTotal, long remainingOffsets) {
    public OperationProgress {
        if (partitionsDone < 0 || partitionsDone > partitionsTotal || remainingOffsets < 0) {
            throw new IllegalArgumentException("not a progress: " + partitionsDone + " of " + partitionsTotal
                + " partition(s), " + remainingOffsets + " offset(s) to go");
        }
    }

    /** True once every partition is finished. */
    public boolean finished() {
        return partitionsDone == partitionsTotal;
    }
}
