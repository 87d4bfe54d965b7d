package io.clustermirror.broker.fetch;

import io.clustermirror.common.MirrorError;
import io.clustermirror.common.compat.LogPrefix;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.metrics.Metrics;
import org.slf4j.Logger;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;

/**
 * The partitions one mirror fetches on this broker, each as its current {@link PartitionFetchState}, with the mirror's
 * {@link FetcherMetrics}. A partition leaves the set when it is removed, or on its own when it fails, diverges or is
 * dropped (this broker no longer leads it).
 *
 * <p>Invariant: a state leaves the set once; on the way out it is marked {@link PartitionFetchState#removed} under its
 * lock, so no append for it is in flight or can start, then detached from its owner (the coordinator's pending set or
 * a fetcher), and only then reported.
 */
final class FetchedPartitions implements AutoCloseable {
    /** How many partitions a summary line names before it counts the rest. */
    static final int PARTITIONS_NAMED = 5;

    private final Map<TopicPartition, PartitionFetchState> partitions = new ConcurrentHashMap<>();
    /** Partitions whose fetching worked again since the last {@link #reportUnavailable} pass, which logs them as one line. */
    private final Queue<TopicPartition> availableAgain = new ConcurrentLinkedQueue<>();
    private final FetcherMetrics metrics;
    private final FetchListener listener;
    private final Logger log;
    private final Consumer<PartitionFetchState> detach;

    /**
     * @param detach takes a partition that left the set away from whoever owns it (pending on the coordinator or
     *               assigned to a fetcher)
     */
    FetchedPartitions(Metrics registry, String mirror, int localNodeId, FetchListener listener, LogPrefix logPrefix,
                      Consumer<PartitionFetchState> detach) {
        this.metrics = new FetcherMetrics(registry, mirror, localNodeId, partitions::values);
        this.listener = listener;
        this.log = logPrefix.logger(FetchedPartitions.class);
        this.detach = detach;
    }

    FetcherMetrics metrics() {
        return metrics;
    }

    /** Adds a new incarnation of a partition (after {@link #remove} of the previous one). */
    void add(PartitionFetchState st) {
        partitions.put(st.tp, st);
        metrics.addPartition(st);
    }

    /** Removes the partition; returns its state, or null if it was not fetched. No append for it is in flight after it. */
    PartitionFetchState remove(TopicPartition tp) {
        PartitionFetchState st = partitions.remove(tp);
        if (st != null) {
            retire(st);
        }
        return st;
    }

    /** Removes every partition (on close). */
    void removeAll() {
        for (PartitionFetchState st : new ArrayList<>(partitions.values())) {
            if (partitions.remove(st.tp, st)) {
                retire(st);
            }
        }
    }

    /** The partition's fetch state, or null when it is not fetched. */
    PartitionFetchState get(TopicPartition tp) {
        return partitions.get(tp);
    }

    /** True while {@code st} is the fetched incarnation of its partition. */
    boolean isCurrent(PartitionFetchState st) {
        return !st.removed && partitions.get(st.tp) == st;
    }

    Collection<PartitionFetchState> values() {
        return partitions.values();
    }

    /** The partitions and their next fetch offsets (a snapshot). */
    Map<TopicPartition, Long> fetchOffsets() {
        Map<TopicPartition, Long> out = new HashMap<>();
        partitions.forEach((tp, st) -> out.put(tp, st.fetchOffset));
        return out;
    }

    void recordAppend(int batches, long records) {
        metrics.batchesAppended.record(batches);
        metrics.recordsAppended.record(records);
    }

    /** Fails a partition: removes it and tells the listener. */
    void fail(PartitionFetchState st, MirrorError error, String message, Throwable cause) {
        leave(st, true, () -> {
            if (cause != null) {
                log.warn("Mirror partition {} failed with {}: {}", st.tp, error, message, cause);
            } else {
                log.warn("Mirror partition {} failed with {}: {}", st.tp, error, message);
            }
            listener.onFailure(st.tp, error, message);
        });
    }

    /**
     * The source refused the mirror's credentials: fails the partition, so that describe shows why it does not progress
     * (retrying in silence would look like a stall); the partition is retried like any failed one.
     */
    void failAuthentication(PartitionFetchState st, AuthenticationException e) {
        fail(st, MirrorError.SOURCE_CLUSTER_UNREACHABLE, "authentication to the source cluster failed (" + e.getMessage()
            + "); check the mirror's credentials (its sasl.* and ssl.* configs) and its principal on the source", null);
    }

    /**
     * The source deleted {@code [fromOffset, toOffset)} before it was mirrored: removes the partition and tells the
     * listener, which decides whether mirroring goes on past the range.
     */
    void sourceRecordsLost(PartitionFetchState st, long fromOffset, long toOffset) {
        leave(st, false, () -> {
            log.warn("The source deleted offsets [{}, {}) of {} before they were mirrored (retention or deleteRecords moved its "
                + "log start past the mirror's position)", fromOffset, toOffset, st.tp);
            listener.onSourceRecordsLost(st.tp, fromOffset, toOffset);
        });
    }

    /** Counts source records skipped because the source deleted them before they were mirrored. */
    void recordSkipped(long records) {
        metrics.sourceRecordsSkipped.record(records);
    }

    /** The source topic was deleted or re-created: removes the partition and tells the listener. */
    void sourceTopicGone(PartitionFetchState st, MirrorError error, String message) {
        leave(st, true, () -> {
            log.warn("Mirror partition {} stops fetching with {}: {}", st.tp, error, message);
            listener.onSourceTopicGone(st.tp, error, message);
        });
    }

    /**
     * Tells the listener about every fetched partition with no successful fetch for {@code afterMs}, once until a fetch
     * succeeds again ({@link #fetched}). A partition its fetcher holds back after an answer of the source (a backoff
     * after an error or an oversized batch) is not unavailable: the time counts from the end of the backoff.
     *
     * <p>The log gets one line per pass for the partitions newly unavailable and one for those available again since the
     * last pass, not one per partition: a link outage of 50,000 partitions is one event for an operator, not 50,000.
     */
    void reportUnavailable(long nowMs, long afterMs) {
        List<TopicPartition> back = new ArrayList<>();
        for (TopicPartition tp; (tp = availableAgain.poll()) != null; ) {
            back.add(tp);
        }
        if (!back.isEmpty()) {
            log.info("Fetching from the source works again for {} mirror partition(s): {}", back.size(),
                summary(back.stream().map(TopicPartition::toString).toList()));
        }
        List<String> reports = new ArrayList<>();
        for (PartitionFetchState st : partitions.values()) {
            if (st.unavailableReported || !quietFor(st, nowMs, afterMs)) {
                continue;
            }
            st.lock.lock();
            try {
                long sinceMs = st.lastFetchedMs;
                if (isCurrent(st) && !st.unavailableReported && quietFor(st, nowMs, afterMs)) {
                    st.unavailableReported = true;
                    String problem = st.sourceProblem;
                    String report = "no fetch of " + st.tp + " from the source succeeded for " + (nowMs - sinceMs) / 1000
                        + " s (since " + Instant.ofEpochMilli(sinceMs) + ")" + (problem == null ? "" : ": " + problem);
                    log.debug("Source unavailable: {}", report);
                    reports.add(report);
                    listener.onSourceUnavailable(st.tp, report);
                }
            } finally {
                st.lock.unlock();
            }
        }
        if (!reports.isEmpty()) {
            log.warn("Source unavailable for {} mirror partition(s): {}", reports.size(), summary(reports));
        }
    }

    /** The first {@link #PARTITIONS_NAMED} of {@code items}, then how many more there are. */
    static String summary(List<String> items) {
        String named = String.join("; ", items.subList(0, Math.min(PARTITIONS_NAMED, items.size())));
        return items.size() <= PARTITIONS_NAMED ? named : named + "; and " + (items.size() - PARTITIONS_NAMED) + " more";
    }

    private static boolean quietFor(PartitionFetchState st, long nowMs, long afterMs) {
        return nowMs - Math.max(st.lastFetchedMs, st.notBeforeMs) >= afterMs;
    }

    /** A fetch of the partition from the source succeeded: clears a reported unavailability. */
    void fetched(PartitionFetchState st, long nowMs) {
        st.lastFetchedMs = nowMs;
        st.sourceProblem = null;
        if (!st.unavailableReported) {
            return;
        }
        st.lock.lock();
        try {
            if (st.unavailableReported && isCurrent(st)) {
                st.unavailableReported = false;
                log.debug("Fetching {} from the source works again", st.tp);
                availableAgain.add(st.tp);
                listener.onSourceAvailable(st.tp);
            }
        } finally {
            st.lock.unlock();
        }
    }

    /** The source diverged from the mirrored data: removes the partition and tells the listener. */
    void diverged(PartitionFetchState st, int sourceEpoch, long endOffset) {
        leave(st, true, () -> {
            log.warn("Source log of {} diverged from the mirrored data: source epoch {} ends at offset {}, "
                + "mirrored up to offset {} with last source epoch {}", st.tp, sourceEpoch, endOffset,
                st.fetchOffset - 1, st.lastFetchedEpoch);
            listener.onDivergence(st.tp, sourceEpoch, endOffset);
        });
    }

    /** This broker no longer leads the partition at the expected epoch: drops it silently. */
    void drop(PartitionFetchState st, String why) {
        leave(st, false, () -> log.info("Dropped {} at source offset {}: {}", st.tp, st.fetchOffset, why));
    }

    /**
     * The way out for a partition that stops on its own: if {@code st} is still current, removes and retires it, counts
     * a failure, and reports, all under its lock so that a concurrent removal and re-add cannot interleave.
     */
    private void leave(PartitionFetchState st, boolean failure, Runnable report) {
        st.lock.lock();
        try {
            if (st.removed || !partitions.remove(st.tp, st)) {
                return;
            }
            retire(st);
            if (failure) {
                metrics.failedPartitions.record();
            }
            report.run();
        } finally {
            st.lock.unlock();
        }
    }

    /** Marks the partition removed under its lock (waits for an in-flight append) and detaches it. */
    private void retire(PartitionFetchState st) {
        st.lock.lock();
        try {
            st.removed = true;
        } finally {
            st.lock.unlock();
        }
        detach.accept(st);
        if (partitions.get(st.tp) == null) {
            metrics.removePartition(st.tp);
        }
    }

    @Override
    public void close() {
        metrics.close();
    }
}
