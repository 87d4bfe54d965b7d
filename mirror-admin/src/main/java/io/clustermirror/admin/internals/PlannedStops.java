package io.clustermirror.admin.internals;

import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.PartitionCatchUp;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.image.MirrorImage;
import org.apache.kafka.common.TopicPartition;

import java.util.List;
import java.util.Map;

/**
 * The decisions of a planned stop (pure): which selections it refuses, and how far each partition is from the source.
 * The source's offsets are read from the source itself at each check rather than taken from the leaders' progress
 * snapshots in {@code __mirror_state}: a leader writes a snapshot only when its progress changes, so an idle partition
 * that has caught up never writes one after the wait began, and a snapshot holds the source's high watermark rather
 * than its last stable offset when the mirror fetches {@code read_uncommitted}.
 */
public final class PlannedStops {
    private PlannedStops() {
    }

    /**
     * Refuses a selection with a PAUSED topic: it fetches nothing, so it cannot catch up.
     *
     * @throws ClusterMirrorException MIRROR_TOPIC_NOT_MIRRORING naming the first paused topic
     */
    public static void refusePaused(MirrorImage image, List<TopicPartition> partitions) {
        partitions.stream().map(TopicPartition::topic).distinct()
            .filter(topic -> image.topic(topic).filter(t -> t.desired() == DesiredState.PAUSED).isPresent())
            .findFirst().ifPresent(topic -> {
                throw new ClusterMirrorException(MirrorError.MIRROR_TOPIC_NOT_MIRRORING, "topic '" + topic + "' is PAUSED: it "
                    + "fetches nothing, so a planned stop would wait for it in vain; nothing was stopped. Resume it first "
                    + "(--resume), or stop it without --planned");
            });
    }

    /** How far each partition is from the source, given both sides' offsets (a partition missing from a map is unknown). */
    public static List<PartitionCatchUp> catchUp(MirrorImage image, String mirror, List<TopicPartition> partitions,
                                                 Map<TopicPartition, Long> sourceStable, Map<TopicPartition, Long> sourceEnds,
                                                 Map<TopicPartition, Long> destinationEnds, Map<TopicPartition, Long> destinationStable,
                                                 long nowMs) {
        long unknown = MirrorPartitionDescription.UNKNOWN;
        return partitions.stream().map(tp -> new PartitionCatchUp(tp.topic(), tp.partition(), StopPreviews.stateOf(image, mirror, tp),
                sourceStable.getOrDefault(tp, unknown), sourceEnds.getOrDefault(tp, unknown), destinationEnds.getOrDefault(tp, unknown),
                destinationStable.getOrDefault(tp, unknown), StopPreviews.lagMs(image, mirror, tp, nowMs)))
            .toList();
    }
}
