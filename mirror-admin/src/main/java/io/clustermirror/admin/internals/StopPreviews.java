package io.clustermirror.admin.internals;

import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.StopPreview;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;
import org.apache.kafka.common.TopicPartition;

import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.stream.IntStream;

/**
 * The decisions of a failover dry-run (pure): which partitions a stop of the same topics would select, with the same
 * rules and refusals as the mirror controller's STOP, and what it would do to each given the destination's offsets.
 */
public final class StopPreviews {
    private StopPreviews() {
    }

    /**
     * The partitions of the topics a stop would select, ordered by topic and partition.
     *
     * @throws ClusterMirrorException as the stop would fail: UNKNOWN_CLUSTER_MIRROR, INVALID_REQUEST (no topics),
     *                                TOPIC_NOT_IN_CLUSTER_MIRROR (a pattern matching none of its topics),
     *                                MIRROR_TOPIC_NOT_MIRRORING (a topic already stopped)
     */
    public static List<TopicPartition> partitionsToStop(MirrorImage image, String mirror, List<String> topics, List<String> excludes) {
        SortedMap<String, MirrorTopicRecord> selected = image.selectTopicsOf(mirror, topics, excludes);
        for (MirrorTopicRecord topic : selected.values()) {
            if (topic.desired() == DesiredState.STOPPED) {
                throw new ClusterMirrorException(MirrorError.MIRROR_TOPIC_NOT_MIRRORING, "topic '" + topic.topic() + "' is already STOPPED");
            }
        }
        return selected.values().stream()
            .flatMap(topic -> IntStream.range(0, topic.partitions()).mapToObj(p -> new TopicPartition(topic.topic(), p)))
            .toList();
    }

    /**
     * What the stop would do to one partition: truncate from the last stable offset to the end when a transaction is
     * open there, nothing otherwise (also when the end is unknown: the stop then waits for the partition's leader). With
     * the partition's lag in milliseconds at {@code nowMs}: how old the source records are that a stop now would leave
     * behind.
     */
    public static StopPreview preview(MirrorImage image, String mirror, TopicPartition tp, long end, long lastStableOffset,
                                      long records, List<Long> openProducerIds, long nowMs) {
        Optional<PartitionStateRecord> recorded = image.partitionState(mirror, tp.topic(), tp.partition());
        PartitionState state = stateOf(recorded);
        boolean truncates = end >= 0 && lastStableOffset >= 0 && lastStableOffset < end;
        long unknown = MirrorPartitionDescription.UNKNOWN;
        return new StopPreview(tp.topic(), tp.partition(), state, end, lastStableOffset, truncates ? lastStableOffset : unknown,
            truncates ? end : unknown, truncates ? records : 0, openProducerIds, lagMs(image, mirror, tp, nowMs));
    }

    /** The partition's actual state as its leader last reported it, UNKNOWN before any report. */
    static PartitionState stateOf(MirrorImage image, String mirror, TopicPartition tp) {
        return stateOf(image.partitionState(mirror, tp.topic(), tp.partition()));
    }

    /** The partition's lag in milliseconds at {@code nowMs} as its leader last recorded it, UNKNOWN before any report. */
    static long lagMs(MirrorImage image, String mirror, TopicPartition tp, long nowMs) {
        return image.partitionState(mirror, tp.topic(), tp.partition()).map(r -> r.lagMs(nowMs))
            .orElse((long) MirrorPartitionDescription.UNKNOWN);
    }

    private static PartitionState stateOf(Optional<PartitionStateRecord> recorded) {
        return recorded.map(PartitionStateRecord::state).orElse(PartitionState.UNKNOWN);
    }
}
