package io.clustermirror.broker.fetch;

import org.apache.kafka.common.Node;

/**
 * Which fetcher fetches each partition, as the {@link SourceLeaderCoordinator} decides it ({@link SourceFetchers} in a
 * broker): it assigns a partition to the fetcher of its source leader, takes it away again, and stops fetchers left idle.
 */
interface FetcherAssignments {
    /** Hands the partition to the fetcher of {@code leader}, which sets {@link PartitionFetchState#sourceBroker}. */
    void assign(PartitionFetchState st, Node leader);

    /** Takes the partition away from the fetcher it is assigned to, if any. */
    void unassign(PartitionFetchState st);

    /** Stops the fetchers that have no partition left. */
    void stopIdle();
}
