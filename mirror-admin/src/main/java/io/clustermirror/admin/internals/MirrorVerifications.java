package io.clustermirror.admin.internals;

import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;

import org.apache.kafka.common.TopicPartition;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The decisions of an integrity check (pure): which partitions it covers and the range of each that was mirrored, so
 * that the executor only reads and compares.
 */
public final class MirrorVerifications {
    /** The selection when no topic is named: every topic of the mirror. */
    private static final List<String> ALL_TOPICS = List.of(".*");

    private MirrorVerifications() {
    }

    /**
     * One partition to check.
     *
     * @param barrierOffset the offset of the barrier a stop wrote after the last mirrored batch, or -1 if none
     */
    public record Target(TopicPartition partition, PartitionState state, long barrierOffset) {
        /** True once the stop has written its barrier: the mirrored range ends there, local writes follow it. */
        public boolean stopped() {
            return state == PartitionState.STOPPED && barrierOffset >= 0;
        }
    }

    /**
     * The partitions of the selected topics (all the mirror's when {@code topics} is empty), by topic and partition.
     *
     * @throws ClusterMirrorException UNKNOWN_CLUSTER_MIRROR, or TOPIC_NOT_IN_CLUSTER_MIRROR naming a pattern that matches
     *                                none of its topics
     */
    public static List<Target> partitionsToVerify(MirrorImage image, String mirror, List<String> topics, List<String> excludes) {
        if (topics.isEmpty() && image.mirror(mirror).isPresent() && image.topicsOf(mirror).isEmpty()) {
            return List.of();
        }
        return image.selectTopicsOf(mirror, topics.isEmpty() ? ALL_TOPICS : topics, excludes).values().stream()
            .flatMap(topic -> IntStream.range(0, topic.partitions()).mapToObj(p -> target(image, mirror, topic, p)))
            .toList();
    }

    private static Target target(MirrorImage image, String mirror, MirrorTopicRecord topic, int partition) {
        PartitionStateRecord state = image.partitionState(mirror, topic.topic(), partition).orElse(null);
        return new Target(new TopicPartition(topic.topic(), partition), state == null ? PartitionState.UNKNOWN : state.state(),
            state == null ? -1 : state.barrierOffset());
    }

    /**
     * The range a check compares: from the greater log start (below it one side no longer holds the batches) to the
     * barrier of a stopped partition, or else to the destination's high watermark (all it has mirrored so far).
     */
    public static Range range(Target target, long sourceLogStart, long destinationLogStart, long destinationHighWatermark) {
        long from = Math.max(sourceLogStart, destinationLogStart);
        long to = target.stopped() ? target.barrierOffset() : destinationHighWatermark;
        return new Range(from, Math.max(from, to));
    }

    /**
     * The offsets a check of the partition would compare, estimated from the destination's log alone (its log start and
     * high watermark now; -1 if unknown, which estimates 0): the source's log start is only read when the check reaches
     * the partition.
     */
    public static long estimatedOffsets(Target target, long destinationLogStart, long destinationHighWatermark) {
        if (destinationLogStart < 0 || destinationHighWatermark < 0 && !target.stopped()) {
            return 0;
        }
        Range range = range(target, destinationLogStart, destinationLogStart, destinationHighWatermark);
        return range.to() - range.from();
    }

    /** Offsets {@code [from, to)}. */
    public record Range(long from, long to) {
    }

    /**
     * Refuses compacted topics: the destination stores the batches as the source served them, but each cluster's log
     * cleaner then rewrites them on its own schedule, so the two logs may legitimately hold different batches.
     *
     * @param cleanupPolicies the {@code cleanup.policy} of each selected topic, per cluster ("source", "destination")
     * @throws ClusterMirrorException INVALID_REQUEST naming the compacted topics and how to leave them out
     */
    public static void refuseCompacted(Map<String, Map<String, String>> cleanupPolicies) {
        List<String> compacted = cleanupPolicies.entrySet().stream()
            .flatMap(cluster -> cluster.getValue().entrySet().stream()
                .filter(policy -> policy.getValue() != null && policy.getValue().contains("compact"))
                .map(policy -> policy.getKey() + " (cleanup.policy=" + policy.getValue() + " on the " + cluster.getKey() + ")"))
            .distinct().sorted().collect(Collectors.toList());
        if (!compacted.isEmpty()) {
            throw new ClusterMirrorException(MirrorError.INVALID_REQUEST, "cannot verify compacted topics: " + String.join(", ",
                compacted) + ". Each cluster's log cleaner rewrites batches on its own schedule, so their logs may "
                + "legitimately differ; leave them out with --exclude (excludes in the API)");
        }
    }
}
