package io.clustermirror.broker.fetch;

import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.compat.EndpointSettings;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.common.IsolationLevel;

import java.util.Properties;

/**
 * What the fetchers and the coordinator of one mirror read from its configs, resolved once.
 *
 * @param sourceRequestTimeoutMs the source's {@code request.timeout.ms}: timeout of metadata and list-offsets calls
 * @param connectTimeoutMs       the source's {@code socket.connection.setup.timeout.max.ms}: how long a fetcher tries to
 *                               connect before it hands its partitions back
 * @param partitionBackoffMaxMs  {@code mirror.partition.retry.backoff.max.ms}
 * @param maxBytes               {@code mirror.fetch.max.bytes}, at most one second of
 *                               {@code mirror.fetch.rate.limit.bytes.per.sec}: a response then leaves the link
 *                               throttle at most about a second in debt (the source still returns a larger first batch)
 * @param logStartHoldMs         how long a move of the source's log start waits before the destination follows it
 *                               ({@link MirrorConfig#destructiveHoldMs()}; 0 follows at once)
 */
record FetchSettings(boolean readCommitted, int maxWaitMs, int minBytes, int maxBytes, int partitionMaxBytes,
                     long fetchBackoffMs, long partitionBackoffMaxMs, int sourceRequestTimeoutMs, long connectTimeoutMs,
                     long logStartHoldMs) {
    private static final long MAX_SOURCE_BACKOFF_MS = 30_000L;
    private static final int ONE_OVERSIZED_BATCH_BYTES = 16 * 1024 * 1024;
    /** A partition with no successful fetch for this long is reported SOURCE_UNAVAILABLE (until a fetch succeeds). */
    static final long SOURCE_UNAVAILABLE_AFTER_MS = 5_000L;

    FetchSettings {
        fetchBackoffMs = Math.max(1L, fetchBackoffMs);
    }

    /**
     * @param sourceClientProperties the mirror's client configs as this broker resolved them (may hold secrets: only
     *                               the timeouts are read)
     */
    static FetchSettings of(MirrorConfig config, Properties sourceClientProperties) {
        String requestTimeout = sourceClientProperties.getProperty(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG);
        String connectTimeout = sourceClientProperties.getProperty(CommonClientConfigs.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG);
        return new FetchSettings(config.readCommitted(),
            config.getInt(MirrorConfig.FETCH_MAX_WAIT_MS),
            config.getInt(MirrorConfig.FETCH_MIN_BYTES),
            (int) Math.min(config.getInt(MirrorConfig.FETCH_MAX_BYTES),
                config.getLong(MirrorConfig.FETCH_RATE_LIMIT_BYTES_PER_SEC)),
            config.getInt(MirrorConfig.FETCH_PARTITION_MAX_BYTES),
            config.getLong(MirrorConfig.FETCH_BACKOFF_MS),
            config.getLong(MirrorConfig.PARTITION_RETRY_BACKOFF_MAX_MS),
            requestTimeout == null ? 30_000 : Integer.parseInt(requestTimeout.trim()),
            connectTimeout == null ? 30_000L : Long.parseLong(connectTimeout.trim()),
            config.destructiveHoldMs());
    }

    IsolationLevel isolationLevel() {
        return readCommitted ? IsolationLevel.READ_COMMITTED : IsolationLevel.READ_UNCOMMITTED;
    }

    /** How the fetchers' endpoints fetch from the source brokers. */
    EndpointSettings endpointSettings() {
        return new EndpointSettings(maxWaitMs, minBytes, maxBytes, isolationLevel(), connectTimeoutMs,
            fetchRequestTimeoutMs(), maxResponseBytes());
    }

    /** Exponential backoff from mirror.fetch.backoff.ms for the n-th consecutive failure. */
    long partitionBackoffMs(int attempt) {
        long cap = Math.min(MAX_SOURCE_BACKOFF_MS, Math.max(fetchBackoffMs, partitionBackoffMaxMs));
        int shift = Math.min(Math.max(attempt - 1, 0), 20);
        return Math.min(cap, fetchBackoffMs << shift);
    }

    /**
     * The largest fetch response the fetchers read: {@code mirror.fetch.max.bytes} plus room for one batch above the
     * limit, which Kafka returns first when it is larger. Anything larger closes the connection rather than being allocated.
     */
    int maxResponseBytes() {
        return (int) Math.min(Integer.MAX_VALUE, (long) maxBytes + ONE_OVERSIZED_BATCH_BYTES);
    }

    /** Timeout of a fetch request: the source's request.timeout.ms, but always above the long-poll wait. */
    int fetchRequestTimeoutMs() {
        return Math.max(sourceRequestTimeoutMs, maxWaitMs + 1_000);
    }
}
