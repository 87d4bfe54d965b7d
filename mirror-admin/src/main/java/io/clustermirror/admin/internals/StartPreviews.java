package io.clustermirror.admin.internals;

import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.StartPreview;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.TopicPatterns;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;
import org.apache.kafka.common.TopicPartition;

import java.util.List;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.IntStream;

/**
 * The decisions of a start dry-run (pure): which partitions of a START would have their logs cut, and where. Only a
 * topic with a known history is cut (a STOPPED topic of this cluster, or one the source mirrored from this cluster:
 * failback); a new topic is created empty. The cut follows the lineage rules of the destination leaders' PREPARING
 * alignment: the source's barrier if the source mirrored the partition from us and stopped, else the barrier of the
 * mirror being started in, else a batch comparison. It does not see the one refinement that needs the log's leader
 * epochs: after an unclean leader election on this cluster since the source's stop, a failback cuts earlier.
 */
public final class StartPreviews {
    private StartPreviews() {
    }

    /**
     * The partitions of the selected topics that a start would cut, ordered by topic and partition: those of this
     * cluster's STOPPED topics, and those the source mirrored from this cluster ({@code localClusterId}).
     *
     * @throws ClusterMirrorException UNKNOWN_CLUSTER_MIRROR, INVALID_REQUEST (no topics), or MIRROR_TOPIC_NOT_STOPPED for a
     *                                stopped topic whose partitions have not finished stopping (as the start would)
     */
    public static List<TopicPartition> partitionsToStart(MirrorImage image, MirrorImage sourceImage, String localClusterId,
                                                         String mirror, List<String> topics, List<String> excludes) {
        if (image.mirror(mirror).isEmpty()) {
            throw new ClusterMirrorException(MirrorError.UNKNOWN_CLUSTER_MIRROR, "no mirror named '" + mirror + "'");
        }
        TopicPatterns selected = TopicPatterns.required(topics);
        TopicPatterns excluded = TopicPatterns.of(excludes);
        TreeMap<String, Integer> partitions = new TreeMap<>();
        image.topics().values().stream().filter(t -> t.desired() == DesiredState.STOPPED)
            .forEach(t -> partitions.put(t.topic(), t.partitions()));
        sourceImage.mirrors().values().stream().filter(m -> localClusterId.equals(m.sourceClusterId())).map(MirrorRecord::name)
            .flatMap(m -> sourceImage.topicsOf(m).stream())
            .forEach(t -> partitions.putIfAbsent(t.topic(), t.partitions()));
        partitions.keySet().removeIf(topic -> !selected.matches(topic) || excluded.matches(topic)
            || image.topic(topic).filter(t -> t.desired() != DesiredState.STOPPED).isPresent());
        partitions.keySet().forEach(topic -> image.topic(topic).ifPresent(t -> refuseStopping(image, t)));
        return partitions.entrySet().stream().flatMap(e -> IntStream.range(0, e.getValue())
            .mapToObj(p -> new TopicPartition(e.getKey(), p))).toList();
    }

    /**
     * Where starting the partition in {@code mirror} would cut its log {@code [logStart, logEnd)}; no records counted yet.
     * An unknown end (-1) cuts nothing that is known.
     */
    public static StartPreview preview(MirrorImage image, MirrorImage sourceImage, String localClusterId, String mirror,
                                       TopicPartition tp, long logStart, long logEnd) {
        Optional<PartitionStateRecord> own = image.partitionState(mirror, tp.topic(), tp.partition());
        long barrier = own.map(PartitionStateRecord::barrierOffset).orElse((long) MirrorPartitionDescription.UNKNOWN);
        long sourceBarrier = sourceImage.partitionStateMirroredFrom(localClusterId, tp.topic(), tp.partition())
            .map(PartitionStateRecord::barrierOffset).orElse((long) MirrorPartitionDescription.UNKNOWN);
        StartPreview.Cut cut = sourceBarrier >= 0 ? StartPreview.Cut.SOURCE_BARRIER
            : barrier >= 0 ? StartPreview.Cut.BARRIER : StartPreview.Cut.BATCH_COMPARISON;
        long cutAt = sourceBarrier >= 0 ? sourceBarrier : barrier;
        if (logEnd < 0 || logEnd <= logStart || cut != StartPreview.Cut.BATCH_COMPARISON && cutAt >= logEnd) {
            cut = StartPreview.Cut.NONE;
        }
        boolean truncates = cut == StartPreview.Cut.BARRIER || cut == StartPreview.Cut.SOURCE_BARRIER;
        long unknown = MirrorPartitionDescription.UNKNOWN;
        PartitionState state = own.map(PartitionStateRecord::state).orElse(PartitionState.UNKNOWN);
        return new StartPreview(tp.topic(), tp.partition(), state, barrier, sourceBarrier, logEnd, cut,
            truncates ? Math.max(logStart, cutAt) : unknown, truncates ? logEnd : unknown, 0);
    }

    /** As the start refuses: until every partition is STOPPED its log may still be cut, so what is local is not known yet. */
    private static void refuseStopping(MirrorImage image, MirrorTopicRecord stopped) {
        List<Integer> stopping = IntStream.range(0, stopped.partitions()).filter(p -> image.partitionState(stopped.mirror(),
            stopped.topic(), p).filter(s -> s.state() != PartitionState.STOPPED).isPresent()).boxed().toList();
        if (!stopping.isEmpty()) {
            throw new ClusterMirrorException(MirrorError.MIRROR_TOPIC_NOT_STOPPED, "topic '" + stopped.topic() + "' has "
                + "partitions that have not finished stopping: " + stopping + "; retry when describe shows them STOPPED");
        }
    }
}
