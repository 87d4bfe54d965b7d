package io.clustermirror.admin.internals;

import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.OperationProgress;
import io.clustermirror.admin.PartitionCatchUp;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.image.MirrorImage;
import org.apache.kafka.common.TopicPartition;

import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.IntStream;

/**
 * The decisions of a planned stop, and of a start that waits for its topics to catch up (pure): which selections a
 * planned stop refuses, which partitions a start waits for, and how far each partition is from the source.
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

    /**
     * The partitions of the started topics, ordered by topic and partition, from an image read after the start's answer:
     * the controller commits the answer and the topics' records in one transaction, so that image holds them all.
     *
     * @throws ClusterMirrorException UNKNOWN_SERVER_ERROR if a started topic is missing from the image all the same
     */
    public static List<TopicPartition> partitionsOf(MirrorImage image, List<String> startedTopics) {
        return startedTopics.stream().sorted()
            .map(topic -> image.topic(topic).orElseThrow(() -> new ClusterMirrorException(MirrorError.UNKNOWN_SERVER_ERROR,
                "topic '" + topic + "' was started but is missing from the mirror's metadata; --describe the mirror")))
            .flatMap(topic -> IntStream.range(0, topic.partitions()).mapToObj(p -> new TopicPartition(topic.topic(), p)))
            .toList();
    }

    /**
     * The progress of a wait, from one check: the partitions {@code done} holds for, and the offsets the others are behind
     * (those whose offsets are unknown count for nothing).
     */
    public static OperationProgress progress(List<PartitionCatchUp> checked, Predicate<PartitionCatchUp> done) {
        List<PartitionCatchUp> behind = checked.stream().filter(done.negate()).toList();
        return new OperationProgress(checked.size() - behind.size(), checked.size(),
            behind.stream().mapToLong(PartitionCatchUp::lag).filter(lag -> lag > 0).sum());
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
