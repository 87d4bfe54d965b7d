package io.clustermirror.admin;

import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorError;

import java.util.List;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * A wait for partitions to catch up with the source ended at its timeout with some still behind. Error
 * {@code MIRROR_TOPIC_NOT_CAUGHT_UP}. From a planned stop ({@link MirrorTopicsOptions#planned}): nothing was stopped.
 * From a start that waits ({@link MirrorTopicsOptions#waitUntilCaughtUp}, {@link #afterStart}): the topics were started
 * and go on mirroring.
 */
public class NotCaughtUpException extends ClusterMirrorException {
    private static final long serialVersionUID = 1L;
    private static final int LISTED_PARTITIONS = 5;
    private final transient List<PartitionCatchUp> behind;

    /**
     * @param behind    the partitions that had not caught up at the last check, ordered by topic and partition
     * @param timeoutMs how long the stop waited
     */
    public NotCaughtUpException(List<PartitionCatchUp> behind, long timeoutMs) {
        this(behind, timeoutMs + " ms, so nothing was stopped", PartitionCatchUp::behindBecause,
            "Stop the source's producers and retry, with a longer --timeout-ms if the mirror is still copying");
    }

    private NotCaughtUpException(List<PartitionCatchUp> behind, String outcome, Function<PartitionCatchUp, String> why,
                                 String advice) {
        super(MirrorError.MIRROR_TOPIC_NOT_CAUGHT_UP, behind.size() + " partition(s) had not caught up with the source after "
            + outcome + ": " + behind.stream().limit(LISTED_PARTITIONS).map(why).collect(Collectors.joining("; "))
            + (behind.size() > LISTED_PARTITIONS ? " and " + (behind.size() - LISTED_PARTITIONS) + " more" : "")
            + ". " + advice);
        this.behind = List.copyOf(behind);
    }

    /**
     * A start that waits gave up: the topics were started, but these partitions were not MIRRORING and caught up when its
     * timeout passed.
     *
     * @param behind    the partitions not MIRRORING and caught up at the last check, ordered by topic and partition
     * @param timeoutMs how long the start and the wait took
     */
    public static NotCaughtUpException afterStart(List<PartitionCatchUp> behind, long timeoutMs) {
        return new NotCaughtUpException(behind, timeoutMs + " ms; the topics were started and go on mirroring",
            PartitionCatchUp::notMirroringAndCaughtUpBecause, "Follow them with --describe, or wait with a longer --timeout-ms");
    }

    /** The partitions still behind, ordered by topic and partition. */
    public List<PartitionCatchUp> behind() {
        return behind;
    }
}
