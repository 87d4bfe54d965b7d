package io.clustermirror.common.compat;

import org.apache.kafka.common.IsolationLevel;

/**
 * How a {@link NetworkSourceEndpoint} fetches and how long it waits.
 *
 * @param maxWaitMs        how long the source may hold a fetch for {@code minBytes} to arrive
 * @param minBytes         the least the source waits for
 * @param maxBytes         at most about this many bytes a response (the first batch comes whole whatever the limit)
 * @param isolationLevel   read_committed stops at the source's last stable offset
 * @param connectTimeoutMs how long to try to connect before the source broker counts as unreachable
 * @param requestTimeoutMs how long to wait for a response, above {@code maxWaitMs}
 * @param maxResponseBytes the largest response read: a larger size prefix closes the connection instead of allocating it
 */
public record EndpointSettings(int maxWaitMs, int minBytes, int maxBytes, IsolationLevel isolationLevel,
                               long connectTimeoutMs, int requestTimeoutMs, int maxResponseBytes) {
}
