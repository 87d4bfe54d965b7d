package io.clustermirror.admin;

import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorError;

import java.util.List;
import java.util.stream.Collectors;

/**
 * A planned stop ({@link MirrorTopicsOptions#planned}) gave up: some partitions had not caught up with the source when
 * its timeout passed, so nothing was stopped. Error {@code MIRROR_TOPIC_NOT_CAUGHT_UP}.
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
        super(MirrorError.MIRROR_TOPIC_NOT_CAUGHT_UP, behind.size() + " partition(s) had not caught up with the source after "
            + timeoutMs + " ms, so nothing was stopped: " + behind.stream().limit(LISTED_PARTITIONS)
                .map(PartitionCatchUp::behindBecause).collect(Collectors.joining("; "))
            + (behind.size() > LISTED_PARTITIONS ? " and " + (behind.size() - LISTED_PARTITIONS) + " more" : "")
            + ". Stop the source's producers and retry, with a longer --timeout-ms if the mirror is still copying");
        this.behind = List.copyOf(behind);
    }

    /** The partitions still behind, ordered by topic and partition. */
    public List<PartitionCatchUp> behind() {
        return behind;
    }
}
