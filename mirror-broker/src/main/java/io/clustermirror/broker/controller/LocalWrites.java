package io.clustermirror.broker.controller;

import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The records of a STOPPED mirror topic that starting it again would remove. Before mirroring resumes, its log is cut
 * where the lineage says it stops matching the source (as PREPARING's {@code LogAlignment} plans it): at the source's
 * barrier if the source mirrored the partition from us and stopped (failback: what it copied from us is kept), else at
 * this topic's own stop barrier. Every record from there on is lost; a partition with neither barrier (stopped before
 * anything was mirrored into it, or whose state record is missing) counts every record it holds: none came from the
 * mirror, or nothing proves that they did. Starting it in another mirror cuts wherever the log differs from that
 * mirror's source, which is at the barrier or earlier: the count is then a lower bound.
 *
 * @param records how many records would be lost, over all partitions
 * @param ranges  the offsets per partition, for the operator ("partition 0: [101, 143)"), or empty if none
 */
record LocalWrites(long records, String ranges) {
    static final LocalWrites NONE = new LocalWrites(0, "");
    private static final int LISTED_PARTITIONS = 5;

    /**
     * @param image          this cluster's image, with the partition states
     * @param sourceImage    the image of the cluster the START mirrors from
     * @param localClusterId this cluster's id
     * @param stopped        the topic's record, STOPPED
     * @param logs           the destination topic's partitions now
     * @throws ClusterMirrorException MIRROR_TOPIC_NOT_STOPPED if a partition has not finished stopping (its log may
     *                                still be cut; what is local is not known yet)
     */
    static LocalWrites of(MirrorImage image, MirrorImage sourceImage, String localClusterId, MirrorTopicRecord stopped,
                          DestinationCluster.Topic logs) {
        long records = 0;
        List<String> ranges = new ArrayList<>();
        List<Integer> stopping = new ArrayList<>();
        for (int p = 0; p < logs.partitions(); p++) {
            Optional<PartitionStateRecord> own = image.partitionState(stopped.mirror(), stopped.topic(), p);
            if (own.isPresent() && own.get().state() != PartitionState.STOPPED) {
                stopping.add(p);
                continue;
            }
            DestinationCluster.Log log = logs.logs().get(p);
            OptionalLong theirBarrier = barrier(sourceImage.partitionStateMirroredFrom(localClusterId, stopped.topic(), p));
            OptionalLong ownBarrier = barrier(own);
            // Their barrier sits where our log stops matching theirs; ours is a control record, so writes start after it.
            long cut = theirBarrier.isPresent() ? theirBarrier.getAsLong()
                : ownBarrier.isPresent() ? ownBarrier.getAsLong() + 1 : log.startOffset();
            long from = Math.max(cut, log.startOffset());
            if (log.endOffset() > from) {
                records += log.endOffset() - from;
                ranges.add("partition " + p + ": [" + from + ", " + log.endOffset() + ")");
            }
        }
        if (!stopping.isEmpty()) {
            throw new ClusterMirrorException(MirrorError.MIRROR_TOPIC_NOT_STOPPED, "topic '" + stopped.topic() + "' has partitions "
                + "that have not finished stopping: " + stopping + "; retry when describe shows them STOPPED");
        }
        String listed = String.join(", ", ranges.subList(0, Math.min(LISTED_PARTITIONS, ranges.size())))
            + (ranges.size() > LISTED_PARTITIONS ? " and " + (ranges.size() - LISTED_PARTITIONS) + " more partition(s)" : "");
        return new LocalWrites(records, listed);
    }

    private static OptionalLong barrier(Optional<PartitionStateRecord> state) {
        return state.filter(s -> s.barrierOffset() >= 0).map(s -> OptionalLong.of(s.barrierOffset())).orElse(OptionalLong.empty());
    }
}
