package io.clustermirror.broker.fetch;

import io.clustermirror.broker.node.ThreadHealth;
import io.clustermirror.common.compat.SourceEndpoint;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.metrics.Metrics;
import org.slf4j.Logger;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The fetcher threads of one mirror on this broker, one per source broker, and the health of the link to each source
 * broker ({@code thread=fetcher-<mirror>-<source broker id>}), kept across fetcher replacements.
 *
 * <p>Only the coordinator thread assigns partitions, so a fetcher seen idle by it stays idle until it assigns again.
 */
final class SourceFetchers implements FetcherAssignments {
    private final FetchContext context;
    private final Function<Node, SourceEndpoint> endpoints;
    /** The broker's metrics registry, where each fetcher's {@link ThreadHealth} shows. */
    private final Metrics registry;
    private final Logger log;
    private final Map<Integer, SourceFetcher> fetchers = new HashMap<>(); // guarded by fetchers
    private final Map<Integer, ThreadHealth> health = new ConcurrentHashMap<>();
    private boolean closed; // guarded by fetchers

    SourceFetchers(FetchContext context, Function<Node, SourceEndpoint> endpoints, Metrics registry) {
        this.context = context;
        this.endpoints = endpoints;
        this.registry = registry;
        this.log = context.logPrefix().logger(SourceFetchers.class);
    }

    /**
     * Hands the partition to the fetcher of its source leader, starting one (or replacing one whose broker moved to
     * another address: its partitions go back to discovery). Nothing after {@link #shutdown}.
     */
    @Override
    public void assign(PartitionFetchState st, Node leader) {
        List<SourceFetcher> stale = new ArrayList<>();
        SourceFetcher f;
        synchronized (fetchers) {
            if (closed) {
                return;
            }
            f = fetchers.get(leader.id());
            if (f != null && (!f.node().host().equals(leader.host()) || f.node().port() != leader.port()
                || !f.isAlive())) {
                fetchers.remove(leader.id());
                stale.add(f);
                f = null;
            }
            if (f == null) {
                Node node = new Node(leader.id(), leader.host(), leader.port(), leader.rack());
                f = new SourceFetcher(context, endpoints.apply(node), health(leader.id()),
                    context.partitions().metrics().brokerBytesSensor(leader.id()));
                fetchers.put(leader.id(), f);
                f.start();
            }
        }
        for (SourceFetcher old : stale) {
            log.info("Source broker {} moved to {}:{}; replacing its fetcher", leader.id(), leader.host(), leader.port());
            old.initiateShutdown();
            for (PartitionFetchState moved : old.drain()) {
                context.rediscovery().rediscover(moved, false, 0L);
            }
        }
        f.assign(st);
    }

    @Override
    public void unassign(PartitionFetchState st) {
        synchronized (fetchers) {
            SourceFetcher f = fetchers.get(st.sourceBroker);
            if (f != null) {
                f.unassign(st);
            }
        }
    }

    /** Stops fetchers without partitions (their source broker lost all our leaders). */
    @Override
    public void stopIdle() {
        List<SourceFetcher> idle = new ArrayList<>();
        synchronized (fetchers) {
            fetchers.values().removeIf(f -> {
                if (f.assignedCount() == 0) {
                    idle.add(f);
                    return true;
                }
                return false;
            });
        }
        for (SourceFetcher f : idle) {
            log.info("Stopping the idle fetcher for source broker {}", f.node().id());
            f.initiateShutdown();
        }
    }

    /** Fetch session id per source broker (0 while none). */
    Map<Integer, Integer> sessionIds() {
        Map<Integer, Integer> out = new HashMap<>();
        synchronized (fetchers) {
            fetchers.forEach((id, f) -> out.put(id, f.sessionId()));
        }
        return out;
    }

    /**
     * Tells every fetcher to stop and returns them, to be joined; no fetcher starts after it. Fetcher threads are never
     * interrupted: one may be inside a log append, and an interrupt during FileChannel I/O closes the channel
     * (ClosedByInterruptException), which Kafka treats as a log dir failure. They stop on a flag and a wakeup.
     */
    List<SourceFetcher> shutdown() {
        List<SourceFetcher> all;
        synchronized (fetchers) {
            closed = true;
            all = new ArrayList<>(fetchers.values());
            fetchers.clear();
        }
        all.forEach(SourceFetcher::initiateShutdown);
        return all;
    }

    /** Removes the health metrics; after the fetchers stopped. */
    void closeHealth() {
        health.values().forEach(ThreadHealth::close);
    }

    private ThreadHealth health(int sourceBrokerId) {
        return health.computeIfAbsent(sourceBrokerId,
            id -> new ThreadHealth(registry, log, "fetcher-" + context.mirrorName() + "-" + id));
    }
}
