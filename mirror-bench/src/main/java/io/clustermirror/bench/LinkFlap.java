package io.clustermirror.bench;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.admin.ClusterMirrorDescription;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.MirrorTopicDescription;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testsupport.FaultProxy;
import io.clustermirror.testsupport.FreePorts;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.ApiKeys;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.LinkedHashMap;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The scale part's link flap ({@code scale.flap.s}): the mirror reads each source broker through a Kafka {@link FaultProxy}
 * of its own (a listener of the broker's, advertised at the proxy's address, so that every connection of the mirror
 * crosses it), and the proxies go silent for a while, as a WAN outage that loses nothing: connections stay open, requests go unanswered,
 * reconnects are accepted and go unanswered too. Then the link comes back.
 *
 * <p>What it measures: how long until every partition reports {@code SOURCE_UNAVAILABLE}; whether any partition turns
 * FAILED; after the link is back, how long until every partition is MIRRORING again with no error and its source end
 * known and reached; and during that reconnect, the requests the mirror sends the source (by API, and the busiest
 * second) against its idle rate before the outage, the connections it opens, and the destination's and the source's CPU.
 */
final class LinkFlap implements AutoCloseable {
    static final String LISTENER = "FLAP";
    /** How long the idle request rate is sampled before the outage. */
    private static final long BASELINE_MS = 10_000;
    private static final long POLL_MS = 1_000;

    /** Each source broker's listener port behind its proxy, by node id. */
    private final Map<Integer, Integer> listenerPorts = new TreeMap<>();
    private final Map<Integer, FaultProxy> proxies = new TreeMap<>();

    private LinkFlap() {
    }

    /** A proxy for each of {@code brokers} source brokers (node ids 1 to {@code brokers}), in front of a listener port of its own. */
    static LinkFlap create(int brokers) throws IOException, InterruptedException {
        LinkFlap flap = new LinkFlap();
        try {
            for (int id = 1; id <= brokers; id++) {
                int port = FreePorts.next();
                flap.listenerPorts.put(id, port);
                flap.proxies.put(id, FaultProxy.startKafka("flap-" + id, new InetSocketAddress("localhost", port)));
            }
            return flap;
        } catch (IOException | RuntimeException e) {
            flap.close();
            throw e;
        }
    }

    /** The source brokers' listeners behind the proxies, each advertised at its proxy's address. */
    List<BenchCluster.Listener> listeners() {
        return proxies.entrySet().stream().map(e -> new BenchCluster.Listener(e.getKey(), LISTENER, "PLAINTEXT",
            listenerPorts.get(e.getKey()), e.getValue().address().getPort())).toList();
    }

    /** The mirror's {@code bootstrap.servers}: the proxies. */
    String bootstrap() {
        return String.join(",", proxies.values().stream().map(p -> "localhost:" + p.address().getPort()).toList());
    }

    /**
     * Counts of a mirror's partitions during the flap. {@code healthy}: MIRRORING, no error, the source end known and
     * the destination at least at its target.
     */
    record Counts(int partitions, int unavailable, int failed, int healthy) {
        static Counts of(ClusterMirrorDescription d, Map<TopicPartition, Long> targets) {
            Counts sum = new Counts(0, 0, 0, 0);
            for (MirrorTopicDescription t : d.topics()) {
                for (MirrorPartitionDescription p : t.partitions()) {
                    Counts one = of(p, targets.get(new TopicPartition(t.topic(), p.partition())));
                    sum = new Counts(sum.partitions + 1, sum.unavailable + one.unavailable, sum.failed + one.failed,
                        sum.healthy + one.healthy);
                }
            }
            return sum;
        }

        /** One partition's counts (each 0 or 1) against its {@code target} end offset (null: never healthy). */
        static Counts of(MirrorPartitionDescription p, Long target) {
            boolean unavailable = p.lastError() != null && p.lastError().startsWith(MirrorError.SOURCE_UNAVAILABLE.name());
            boolean healthy = p.state() == PartitionState.MIRRORING && p.lastError() == null
                && p.sourceEndOffset() != MirrorPartitionDescription.UNKNOWN && target != null && p.destinationEndOffset() >= target;
            return new Counts(1, unavailable ? 1 : 0, p.state() == PartitionState.FAILED ? 1 : 0, healthy ? 1 : 0);
        }
    }

    /**
     * One flap of {@code outageMs}: the source silent, then back, until every one of {@code partitions} partitions is
     * healthy again or {@code timeoutMs} passed since the link came back (then the result says how far it got).
     */
    Map<String, Object> run(String at, ClusterMirrorAdmin cm, String mirror, int partitions, Map<TopicPartition, Long> targets,
                            BenchCluster destination, BenchCluster source, long outageMs, long timeoutMs) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("outage_s", outageMs / 1000.0);
        Map<ApiKeys, Long> before = requestsSent();
        Bench.sleep(BASELINE_MS);
        Map<String, Long> idle = difference(requestsSent(), before);
        r.put("idle_requests_per_s", perSecond(idle, BASELINE_MS));
        r.put("idle_requests_per_s_total", Bench.round(sum(idle) * 1000.0 / BASELINE_MS));

        Bench.log(at + "link flap: the source silent for " + outageMs / 1000 + " s");
        int failedDuringOutage = outage(cm, mirror, partitions, targets, outageMs, r);
        Bench.log(at + "link flap: the source is back");
        Counts end = reconnect(cm, mirror, partitions, targets, destination, source, timeoutMs, r);
        r.put("failed_most", Math.max(failedDuringOutage, (int) r.remove("failed_most_after_return")));
        Bench.log(String.format("%slink flap: every partition unavailable after %s s; %s; at most %s FAILED; reconnect: %s requests "
                + "(busiest second %s), %s connections, destination %s millicores",
            at, r.get("seconds_to_all_source_unavailable"),
            r.get("seconds_to_mirroring_after_return") != null
                ? "all MIRRORING again " + r.get("seconds_to_mirroring_after_return") + " s after the return"
                : (end == null ? 0 : end.healthy()) + " of " + partitions + " healthy after " + timeoutMs / 1000 + " s",
            r.get("failed_most"), r.get("reconnect_requests"), r.get("reconnect_busiest_second_requests"),
            r.get("reconnect_connections"), r.get("reconnect_destination_millicores")));
        return r;
    }

    /**
     * The outage: the proxies stall for {@code outageMs} while describe is polled; records when every partition first
     * reported the source unavailable, and returns the most partitions FAILED at once.
     */
    private int outage(ClusterMirrorAdmin cm, String mirror, int partitions, Map<TopicPartition, Long> targets, long outageMs,
                       Map<String, Object> r) {
        long stalled = System.nanoTime();
        silence();
        Double allUnavailable = null;
        int failedMost = 0;
        while (elapsedMs(stalled) < outageMs) {
            Counts c = describe(cm, mirror, targets);
            if (c != null) {
                failedMost = Math.max(failedMost, c.failed());
                if (allUnavailable == null && c.unavailable() >= partitions) {
                    allUnavailable = Bench.round(elapsedMs(stalled) / 1000.0);
                }
            }
            Bench.sleep(Math.min(POLL_MS, Math.max(0, outageMs - elapsedMs(stalled))));
        }
        r.put("seconds_to_all_source_unavailable", allUnavailable);
        return failedMost;
    }

    /**
     * The return: the proxies pass again; polls describe until every partition is healthy or {@code timeoutMs} passed,
     * and records the time, what the mirror sent the source meanwhile, and both brokers' CPU. Returns the last counts.
     */
    private Counts reconnect(ClusterMirrorAdmin cm, String mirror, int partitions, Map<TopicPartition, Long> targets,
                             BenchCluster destination, BenchCluster source, long timeoutMs, Map<String, Object> r) {
        Map<ApiKeys, Long> atReturn = requestsSent();
        long connectionsAtReturn = acceptedConnections();
        double destCpu = destination.brokerCpuSeconds();
        double sourceCpu = source.brokerCpuSeconds();
        long back = System.nanoTime();
        restore();
        long busiestSecond = 0;
        long lastTotal = total(atReturn);
        int failedMost = 0;
        Counts c = null;
        while (elapsedMs(back) < timeoutMs && (c == null || c.healthy() < partitions)) {
            Bench.sleep(POLL_MS);
            long now = total(requestsSent());
            busiestSecond = Math.max(busiestSecond, now - lastTotal);
            lastTotal = now;
            Counts seen = describe(cm, mirror, targets);
            if (seen != null) {
                c = seen;
                failedMost = Math.max(failedMost, c.failed());
            }
        }
        long reconnectMs = elapsedMs(back);
        double reconnectSec = reconnectMs / 1000.0;
        boolean recovered = c != null && c.healthy() >= partitions;
        r.put("seconds_to_mirroring_after_return", recovered ? Bench.round(reconnectSec) : null);
        r.put("healthy_at_end", c == null ? 0 : c.healthy());
        r.put("failed_most_after_return", failedMost);
        Map<String, Long> sent = difference(requestsSent(), atReturn);
        r.put("reconnect_requests", sent);
        r.put("reconnect_requests_per_s", perSecond(sent, reconnectMs));
        r.put("reconnect_requests_per_s_total", Bench.round(sum(sent) / reconnectSec));
        r.put("reconnect_busiest_second_requests", busiestSecond);
        r.put("reconnect_connections", acceptedConnections() - connectionsAtReturn);
        r.put("reconnect_destination_millicores", Bench.round((destination.brokerCpuSeconds() - destCpu) / reconnectSec * 1000));
        r.put("reconnect_source_millicores", Bench.round((source.brokerCpuSeconds() - sourceCpu) / reconnectSec * 1000));
        return c;
    }

    /** Silences every proxy: the source unreachable for the mirror, its connections kept open. */
    void silence() {
        proxies.values().forEach(FaultProxy::stall);
    }

    /** Lets every proxy pass again. */
    void restore() {
        proxies.values().forEach(FaultProxy::pass);
    }

    /** The mirror's counts, or null if describe failed this time (the next poll asks again). */
    private static Counts describe(ClusterMirrorAdmin cm, String mirror, Map<TopicPartition, Long> targets) {
        try {
            return Counts.of(cm.describeClusterMirrors(List.of(mirror)).all().get(60, TimeUnit.SECONDS).get(mirror), targets);
        } catch (ExecutionException | TimeoutException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted during the link flap", e);
        }
    }

    /** The requests sent through every proxy, by API. */
    private Map<ApiKeys, Long> requestsSent() {
        Map<ApiKeys, Long> sum = new TreeMap<>();
        proxies.values().forEach(p -> p.requestsSent().forEach((api, n) -> sum.merge(api, n, Long::sum)));
        return sum;
    }

    private long acceptedConnections() {
        return proxies.values().stream().mapToLong(FaultProxy::acceptedConnections).sum();
    }

    private static Map<String, Long> difference(Map<ApiKeys, Long> after, Map<ApiKeys, Long> before) {
        Map<String, Long> d = new TreeMap<>();
        after.forEach((api, n) -> {
            long delta = n - before.getOrDefault(api, 0L);
            if (delta > 0) {
                d.put(api.name, delta);
            }
        });
        return d;
    }

    private static Map<String, Double> perSecond(Map<String, Long> counts, long ms) {
        Map<String, Double> rates = new TreeMap<>();
        counts.forEach((api, n) -> rates.put(api, Bench.round(n * 1000.0 / ms)));
        return rates;
    }

    private static long sum(Map<String, Long> counts) {
        return counts.values().stream().mapToLong(Long::longValue).sum();
    }

    private static long total(Map<ApiKeys, Long> counts) {
        return counts.values().stream().mapToLong(Long::longValue).sum();
    }

    private static long elapsedMs(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    @Override
    public void close() {
        proxies.values().forEach(FaultProxy::close);
    }
}
