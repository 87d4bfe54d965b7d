package io.clustermirror.broker;

import io.clustermirror.broker.bridge.BrokerHandle;

/**
 * The Cluster Mirror extension attached to one running destination broker. Attach it after the broker
 * has started (launcher or test kit) and again after every broker restart; close it before shutdown.
 */
public final class ClusterMirrorExtension implements AutoCloseable {
    private ClusterMirrorExtension() {
    }

    /** Starts the extension on a started broker and returns at once; its work runs on its own threads. */
    public static ClusterMirrorExtension attach(BrokerHandle broker) {
        throw new UnsupportedOperationException("TODO");
    }

    @Override
    public void close() {
        throw new UnsupportedOperationException("TODO");
    }
}
