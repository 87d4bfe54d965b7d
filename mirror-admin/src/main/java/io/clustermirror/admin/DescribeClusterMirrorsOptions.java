package io.clustermirror.admin;

import org.apache.kafka.clients.admin.AbstractOptions;

/**
 * Options for {@link ClusterMirrorAdmin#describeClusterMirrors(java.util.Collection, DescribeClusterMirrorsOptions)}.
 * {@link #timeoutMs(Integer)} bounds the whole operation, counted from the call; null uses the client's {@code default.api.timeout.ms} (60 seconds by default).
 */
public class DescribeClusterMirrorsOptions extends AbstractOptions<DescribeClusterMirrorsOptions> {
    private boolean includeTransactions;

    /**
     * Whether to analyse, for each described mirror, the committed transactions a plain stop of all its mirroring topics
     * would split across partitions now ({@link ClusterMirrorDescription#transactions()}). Off by default: it reads the
     * tail of every such partition from the destination and waits, while the source answers, for the mirror's sync to have
     * read the source's transaction log past that read (a few seconds), as {@link ClusterMirrorAdmin#previewStopMirrorTopics}
     * does.
     */
    public DescribeClusterMirrorsOptions includeTransactions(boolean includeTransactions) {
        this.includeTransactions = includeTransactions;
        return this;
    }

    public boolean includeTransactions() {
        return includeTransactions;
    }
}
