package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.testkit.MirrorTestCluster;
import io.clustermirror.testsupport.ClusterTopology;
import io.clustermirror.testsupport.TestCluster;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The clusters a test class shares across its tests, each started from its {@link ClusterTopology} by the back end its
 * launch mode names: a source, a destination running the extension, the destination's mirror admin client, and the
 * other clusters the class needs. A class gets its pair from {@link MirrorClusterTest}, which closes it after the class.
 *
 * @param <S> the source's type: {@link MirrorTestCluster} (in-JVM), {@link ProcessCluster} (launched with Cluster Mirror)
 *     or {@link ReleaseSource} (stock Kafka of another release)
 * @param <D> the destination's type, likewise
 */
final class ClusterPair<S extends TestCluster, D extends TestCluster> implements AutoCloseable {
    final S source;
    /** The destination, or null for a class that starts its destinations in its tests ({@link Topologies#sourceOnly}). */
    final D destination;
    /** The destination's mirror admin client, or null without a destination. */
    final ClusterMirrorAdmin mirrors;
    private final Map<String, TestCluster> others;
    // Guarded by this; identity: clusters do not define equality.
    private final Map<TestCluster, ClusterMirrorAdmin> adminClients = new IdentityHashMap<>();

    /**
     * The descriptions of a class's clusters.
     *
     * @param source the source cluster
     * @param destination the destination (made a mirror destination when started), or null
     * @param others more clusters, started after the destination and closed before it
     */
    record Topologies(ClusterTopology source, ClusterTopology destination, List<ClusterTopology> others) {
        static Topologies of(ClusterTopology source, ClusterTopology destination, ClusterTopology... others) {
            return new Topologies(source, destination, Arrays.asList(others));
        }

        /** Only a source: the class starts each destination in a test. */
        static Topologies sourceOnly(ClusterTopology source) {
            return new Topologies(source, null, List.of());
        }
    }

    private ClusterPair(S source, D destination, Map<String, TestCluster> others) {
        this.source = source;
        this.destination = destination;
        this.others = others;
        this.mirrors = destination == null ? null : mirrorsOn(destination);
    }

    /**
     * Starts every cluster of {@code topologies} (source, destination, the others, in that order) and returns them once
     * all are ready; closes what started if the rest fails. The caller's type arguments must match the back ends the
     * launch modes name.
     */
    @SuppressWarnings("unchecked")
    static <S extends TestCluster, D extends TestCluster> ClusterPair<S, D> start(Topologies topologies) throws Exception {
        List<AutoCloseable> started = new ArrayList<>();
        try {
            S source = (S) start(topologies.source(), started);
            D destination = topologies.destination() == null ? null
                : (D) start(topologies.destination().toBuilder().mirrorDestination(true).build(), started);
            Map<String, TestCluster> others = new LinkedHashMap<>();
            for (ClusterTopology other : topologies.others()) {
                others.put(other.name(), start(other, started));
            }
            return new ClusterPair<>(source, destination, others);
        } catch (Exception | AssertionError e) {
            closeInReverse(started, e);
            throw e;
        }
    }

    /** Starts one cluster with the back end of its launch mode, and adds it to {@code started}. */
    private static TestCluster start(ClusterTopology topology, List<AutoCloseable> started) throws Exception {
        AutoCloseable cluster = switch (topology.launchMode()) {
            case IN_JVM -> MirrorTestCluster.start(topology);
            case LAUNCHER, DROP_IN -> ProcessCluster.start(topology);
            case STOCK -> ReleaseSource.start(topology);
        };
        started.add(cluster);
        return (TestCluster) cluster;
    }

    /** Another cluster of the class's topologies, by name. */
    @SuppressWarnings("unchecked")
    <C extends TestCluster> C other(String name) {
        TestCluster other = others.get(name);
        if (other == null) {
            throw new IllegalArgumentException("No cluster " + name + " besides the pair: " + others.keySet());
        }
        return (C) other;
    }

    /** A mirror admin client of {@code cluster} (one of the pair's), made once and closed with the pair. */
    synchronized ClusterMirrorAdmin mirrorsOn(TestCluster cluster) {
        return adminClients.computeIfAbsent(cluster, c -> ClusterMirrorAdmin.create(c.clientProperties()));
    }

    /** Closes the admin clients, then the clusters in the reverse order of their start. */
    @Override
    public void close() throws Exception {
        List<AutoCloseable> all = new ArrayList<>();
        all.add(source instanceof AutoCloseable s ? s : () -> { });
        if (destination instanceof AutoCloseable d) {
            all.add(d);
        }
        others.values().forEach(o -> all.add((AutoCloseable) o));
        synchronized (this) {
            all.addAll(adminClients.values());
        }
        closeInReverse(all, null);
    }

    /** Closes {@code closeables} from the last to the first, every one even if some fail; the failures go to {@code failure} or are thrown. */
    private static void closeInReverse(List<AutoCloseable> closeables, Throwable failure) throws Exception {
        Exception first = null;
        for (int i = closeables.size() - 1; i >= 0; i--) {
            try {
                closeables.get(i).close();
            } catch (Exception e) {
                if (failure != null) {
                    failure.addSuppressed(e);
                } else if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
