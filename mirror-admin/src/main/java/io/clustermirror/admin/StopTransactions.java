package io.clustermirror.admin;

import java.util.List;

/**
 * What a stop of the selected topics would do to the source's transactions, from a failover dry-run
 * ({@link PreviewStopResult#transactions()}): the committed transactions a plain stop would split across partitions,
 * and where a consistent stop ({@link MirrorTopicsOptions#consistent(boolean)}) would cut instead.
 *
 * @param split  the committed transactions a plain stop would leave visible on some partitions and not on others (or
 *               in part on one), ordered by producer id and epoch
 * @param cuts   the consistent cut of each partition that was read, ordered by topic and partition
 * @param limits what the analysis could not see, each a sentence for the operator; never empty: it reads the
 *               destination's mirrored data only, so a transaction none of whose records on a partition was mirrored is
 *               not seen there
 */
public record StopTransactions(List<SplitTransaction> split, List<ConsistentCut> cuts, List<String> limits) {
    public StopTransactions {
        split = List.copyOf(split);
        cuts = List.copyOf(cuts);
        limits = List.copyOf(limits);
    }

    /**
     * Where a consistent stop would cut one partition.
     *
     * @param offset           the consistent cut: the partition keeps the records below it
     * @param lastStableOffset where a plain stop would cut
     * @param extraRecords     the data records in {@code [offset, lastStableOffset)}: what the consistent stop removes that a
     *                         plain stop keeps
     */
    public record ConsistentCut(String topic, int partition, long offset, long lastStableOffset, long extraRecords) {
    }

    /** The data records a consistent stop removes beyond a plain stop, over every partition. */
    public long extraRecords() {
        return cuts.stream().mapToLong(ConsistentCut::extraRecords).sum();
    }
}
