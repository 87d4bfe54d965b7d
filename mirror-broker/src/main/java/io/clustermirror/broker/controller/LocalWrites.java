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

/**
 * The records of a STOPPED mirror topic that starting it again would remove. Its log is cut back to the stop's barrier
 * before mirroring resumes (in another mirror, it is cut wherever it differs from that mirror's source, which is at the
 * barrier or earlier), so every record after a partition's barrier is lost. A partition without a recorded barrier
 * (stopped before anything was mirrored into it, or whose state record is missing) counts every record it holds:
 * none came from the mirror, or nothing proves that they did.
 *
 * @param records how many records would be lost, over all partitions
 * @param ranges  the offsets per partition, for the operator ("partition 0: [101, 143)"), or empty if none
 */
record LocalWrites(long records, String ranges) {
    private static final int LISTED_PARTITIONS = 5;

    /**
     * @param stopped the topic's record, STOPPED
     * @param logs    the destination topic's partitions now
     * @throws ClusterMirrorException MIRROR_TOPIC_NOT_STOPPED if a partition has not finished stopping (its log may
     *                                still be cut; what is local is not known yet)
     */
    static LocalWrites of(MirrorImage image, MirrorTopicRecord stopped, DestinationCluster.Topic logs) {
        long records = 0;
        List<String> ranges = new ArrayList<>();
        List<Integer> stopping = new ArrayList<>();
        for (int p = 0; p < logs.partitions(); p++) {
            Optional<PartitionStateRecord> state = image.partitionState(stopped.mirror(), stopped.topic(), p);
            if (state.isPresent() && state.get().state() != PartitionState.STOPPED) {
                stopping.add(p);
                continue;
            }
            DestinationCluster.Log log = logs.logs().get(p);
            long from = state.map(PartitionStateRecord::barrierOffset).filter(b -> b >= 0).map(b -> Math.max(b + 1, log.startOffset()))
                .orElse(log.startOffset());
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
}
