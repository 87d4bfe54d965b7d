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
 * @param limits what the analysis could not see, each a sentence for the operator; empty only when it saw all it needs
 * @param groupOffsets for each group that committed a selected partition inside transactions, where a consistent stop puts
 *               its offset, ordered by group, topic and partition
 * @param sourceLogReadUpToMs up to when the mirror's sync had read the source's coordinator logs (its transactions and the
 *               synced groups' transactional offset commits), -1 when it never had
 * @param sourceLogCurrent true if it had read them past the moment the destination's offsets were read: every transaction
 *               that can lie below them was known, including one a lagging partition never mirrored. With the source
 *               reachable and its logs readable, the analysis waits a few seconds for that.
 */
public record StopTransactions(List<SplitTransaction> split, List<ConsistentCut> cuts, List<String> limits,
                               List<GroupOffset> groupOffsets, long sourceLogReadUpToMs, boolean sourceLogCurrent) {
    public StopTransactions {
        split = List.copyOf(split);
        cuts = List.copyOf(cuts);
        limits = List.copyOf(limits);
        groupOffsets = List.copyOf(groupOffsets);
    }

    /** An analysis that found no group committing offsets inside transactions. */
    public StopTransactions(List<SplitTransaction> split, List<ConsistentCut> cuts, List<String> limits) {
        this(split, cuts, limits, List.of(), -1, false);
    }

    /**
     * The offset a consistent stop gives a group that committed a partition inside transactions that committed on the
     * source ({@code sendOffsetsToTransaction}): the one the last transaction the cut keeps committed. Resumed there, a
     * read-process-write application reads again exactly the input whose output the cut removed.
     *
     * @param offset     that offset, or -1 when the cut keeps none of the group's commits the mirror knows of: the group then
     *                   keeps the offset the sync copied (at most the cut), which may not match the output kept
     * @param commitsCut the group's known commits of the partition the cut removes
     */
    public record GroupOffset(String group, String topic, int partition, long offset, int commitsCut) {
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
