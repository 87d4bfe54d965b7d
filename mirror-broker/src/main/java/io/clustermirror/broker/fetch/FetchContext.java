package io.clustermirror.broker.fetch;

import io.clustermirror.common.compat.LogPrefix;
import org.apache.kafka.common.utils.Time;

/**
 * What every fetcher of one mirror shares: its settings, its link throttle, its partitions, where a partition goes back
 * for leader discovery, where batches go, and who hears about progress.
 */
record FetchContext(String mirrorName, FetchSettings settings, FetchThrottle throttle, FetchedPartitions partitions,
                    Rediscovery rediscovery, PartitionAppender appender, FetchListener listener, Time time,
                    LogPrefix logPrefix) {

    /** Takes a partition back from a fetcher to find its source leader again. */
    @FunctionalInterface
    interface Rediscovery {
        /**
         * @param checkOffsets check the fetch offset against the source log start and end first (after
         *                     OFFSET_OUT_OF_RANGE)
         * @param delayMs      not before this long from now (backoff)
         */
        void rediscover(PartitionFetchState st, boolean checkOffsets, long delayMs);
    }
}
