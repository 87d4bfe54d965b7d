package io.clustermirror.it;

import io.clustermirror.admin.ClusterMirrorAdmin;
import io.clustermirror.testkit.MirrorTestCluster;

/**
 * A source cluster, a destination cluster running the extension and a mirror admin client of the destination:
 * what most test classes share across their tests.
 */
final class ClusterPair implements AutoCloseable {
    final MirrorTestCluster source;
    final MirrorTestCluster destination;
    final ClusterMirrorAdmin mirrors;

    private ClusterPair(MirrorTestCluster source, MirrorTestCluster destination, ClusterMirrorAdmin mirrors) {
        this.source = source;
        this.destination = destination;
        this.mirrors = mirrors;
    }

    /** Starts both clusters (the destination with the extension); closes what started if the rest fails. */
    static ClusterPair start(MirrorTestCluster.Builder source, MirrorTestCluster.Builder destination) throws Exception {
        MirrorTestCluster src = source.start();
        try {
            MirrorTestCluster dst = destination.withExtension(true).start();
            return new ClusterPair(src, dst, ClusterMirrorAdmin.create(dst.clientProperties()));
        } catch (Exception e) {
            src.close();
            throw e;
        }
    }

    @Override
    public void close() throws Exception {
        try (MirrorTestCluster s = source; MirrorTestCluster d = destination; ClusterMirrorAdmin m = mirrors) {
            // closed in reverse order: the admin client, the destination, then the source
        }
    }
}
