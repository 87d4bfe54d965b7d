package io.clustermirror.broker.fetch;

import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.compat.LogPrefix;
import io.clustermirror.common.compat.ResponseBound;
import io.clustermirror.common.records.HeldDecision;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * The data plane of one mirror on one destination broker: discovers the source leaders of the partitions this broker
 * leads, runs one fetcher thread per source broker that sends consumer Fetch requests (replica id -1, fetch sessions,
 * many partitions per request), and hands the raw batches to the {@link PartitionAppender}.
 *
 * <p>It wires the parts, each with one role: {@link FetchSettings} (the configs), {@link FetchedPartitions} (which
 * partitions are fetched, and the one way out for a partition that fails, diverges or is dropped),
 * {@link SourceClients} (the clients to the source), {@link SourceLeaderCoordinator} (the coordinator thread
 * {@code cluster-mirror-coordinator-<mirror>}: source metadata through an Admin client, with backoff while the source
 * is unreachable) and {@link SourceFetchers} (the fetcher threads {@code cluster-mirror-fetcher-<mirror>-<sourceBrokerId>},
 * each fetching through its {@link SourceEndpoint} and appending). A partition is owned by exactly one thread at a time.
 */
public final class MirrorFetcherManager implements PartitionFetcher {
    private final String mirror;
    private final Logger log;
    private final FetchedPartitions partitions;
    private final SourceClients clients;
    private final SourceFetchers fetchers;
    private final SourceLeaderCoordinator coordinator;
    private final Time time;
    private volatile boolean running = true;

    /**
     * @param sourceClientProperties the mirror's client configs as this broker resolved them
     *                               ({@link io.clustermirror.common.secrets.BrokerClientConfigs#clientProperties}); they
     *                               may hold secrets: never logged
     * @param sourceBound            the largest response the coordinator's admin client reads from the source
     */
    public MirrorFetcherManager(MirrorConfig config, Properties sourceClientProperties, ResponseBound sourceBound, int localNodeId,
                                PartitionAppender appender, FetchListener listener, Metrics metrics) {
        this(config, sourceClientProperties, sourceBound, localNodeId, appender, listener, metrics, Time.SYSTEM);
    }

    /** @param time the mirror's clock: backoffs, unavailability, the link throttle and the leader refresh */
    MirrorFetcherManager(MirrorConfig config, Properties sourceClientProperties, ResponseBound sourceBound, int localNodeId,
                         PartitionAppender appender, FetchListener listener, Metrics metrics, Time time) {
        this.mirror = config.name();
        this.time = time;
        LogPrefix logPrefix = LogPrefix.of("[ClusterMirror mirror=" + mirror + " node=" + localNodeId + "] ");
        this.log = logPrefix.logger(MirrorFetcherManager.class);
        FetchSettings settings = FetchSettings.of(config, sourceClientProperties);
        this.partitions = new FetchedPartitions(metrics, mirror, localNodeId, listener, logPrefix, this::detach);
        this.clients = new SourceClients(mirror, sourceClientProperties, sourceBound, localNodeId, settings, logPrefix, time);
        // An ALTER gives the mirror a new manager, and with it a throttle at the new limit.
        FetchThrottle throttle = new FetchThrottle(time, config.getLong(MirrorConfig.FETCH_RATE_LIMIT_BYTES_PER_SEC));
        FetchContext context = new FetchContext(mirror, settings, throttle, partitions, this::rediscover, appender,
            listener, time, logPrefix);
        this.fetchers = new SourceFetchers(context, clients::endpoint, metrics);
        this.coordinator = new SourceLeaderCoordinator(context, fetchers, clients::metadata,
            config.getLong(MirrorConfig.METADATA_REFRESH_INTERVAL_MS), metrics);
        this.coordinator.start();
    }

    @Override
    public void addPartition(TopicPartition partition, Uuid expectedSourceTopicId, long fetchOffset,
                             int destLeaderEpoch, int lastFetchedEpoch, DestinationLogStart logStart) {
        add(partition, expectedSourceTopicId, fetchOffset, destLeaderEpoch, lastFetchedEpoch, logStart, fetchOffset);
    }

    private void add(TopicPartition partition, Uuid expectedSourceTopicId, long fetchOffset, int destLeaderEpoch, int lastFetchedEpoch,
                     DestinationLogStart logStart, long destLogEndOffset) {
        if (!running) {
            throw new IllegalStateException("mirror fetcher manager of " + mirror + " is closed");
        }
        removePartition(partition);
        PartitionFetchState st = new PartitionFetchState(partition, expectedSourceTopicId, fetchOffset,
            destLeaderEpoch, lastFetchedEpoch, time.milliseconds(), logStart, destLogEndOffset);
        partitions.add(st);
        log.info("Mirroring {} from source offset {} (source topic id {}, destination leader epoch {}, last source epoch {})",
            partition, fetchOffset, expectedSourceTopicId, destLeaderEpoch, lastFetchedEpoch);
        coordinator.rediscover(st, false, 0L);
    }

    @Override
    public void addPartitionPastLostRecords(TopicPartition partition, Uuid expectedSourceTopicId, long fromOffset, long toOffset,
                                            int destLeaderEpoch, DestinationLogStart logStart) {
        partitions.recordSkipped(toOffset - fromOffset);
        add(partition, expectedSourceTopicId, toOffset, destLeaderEpoch, -1, logStart, fromOffset);
    }

    @Override
    public void removePartition(TopicPartition partition) {
        PartitionFetchState st = partitions.remove(partition);
        if (st != null) {
            log.info("Stopped mirroring {} at source offset {}", partition, st.fetchOffset);
        }
    }

    @Override
    public void decideHeldLogStarts(TopicPartition partition, HeldDecision decision) {
        PartitionFetchState st = partitions.get(partition);
        if (st != null) {
            st.heldDecision = decision;
        }
    }

    /** The partitions being mirrored and their next fetch offsets (a snapshot). */
    public Map<TopicPartition, Long> fetchOffsets() {
        return partitions.fetchOffsets();
    }

    /** Fetch session id per source broker (0 while none): for tests and diagnostics. */
    Map<Integer, Integer> fetchSessionIds() {
        return fetchers.sessionIds();
    }

    @Override
    public void close() {
        if (!running) {
            return;
        }
        running = false;
        coordinator.initiateShutdown();
        partitions.removeAll();
        List<SourceFetcher> stopping = fetchers.shutdown();
        join(coordinator);
        stopping.forEach(this::join);
        partitions.close();
        clients.close();
        coordinator.closeHealth();
        fetchers.closeHealth();
        log.info("Closed");
    }

    private void rediscover(PartitionFetchState st, boolean checkOffsets, long delayMs) {
        coordinator.rediscover(st, checkOffsets, delayMs);
    }

    private void detach(PartitionFetchState st) {
        coordinator.detach(st);
    }

    private void join(Thread t) {
        try {
            t.join(TimeUnit.SECONDS.toMillis(30));
            if (t.isAlive()) {
                log.warn("Thread {} did not stop within 30 s", t.getName());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
