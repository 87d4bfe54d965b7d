package io.clustermirror.server;

import io.clustermirror.broker.ClusterMirrorExtension;
import io.clustermirror.broker.bridge.BrokerHandle;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.function.Function;

/**
 * The extension's life on one broker, the same whichever way the node was started (the launcher, or Kafka's own
 * scripts with the agent): attached once the broker has started, closed before the broker shuts down (it stops
 * appending and fetching while the read-only rule still holds and the broker hands its partitions over), detached
 * once the broker is down.
 *
 * <p>Thread-safety: the shutdown (a JVM shutdown hook) may begin while start-up is still attaching; once it has begun,
 * nothing is attached any more.
 */
final class ExtensionLifecycle {
    private static final Logger log = LoggerFactory.getLogger(ExtensionLifecycle.class);

    /** What is attached to a broker: closed before the broker shuts down, detached after. */
    interface Attachment extends AutoCloseable {
        default void detach() {
        }
    }

    /** Attaches the real extension. */
    static final Function<Object, Attachment> CLUSTER_MIRROR_EXTENSION = ExtensionLifecycle::attachExtension;

    private final Function<Object, Attachment> attacher;
    private final Object lock = new Object();
    // Guarded by lock.
    private Attachment attached;
    private Attachment closed;
    private boolean shuttingDown;

    ExtensionLifecycle(Function<Object, Attachment> attacher) {
        this.attacher = attacher;
    }

    /**
     * Attaches to a started broker, unless something is attached already or the shutdown has begun.
     *
     * @throws IllegalStateException if attaching failed: the caller must shut the node down, a destination broker must
     *                               never run without the extension
     */
    void attach(Object brokerServer, int nodeId) {
        synchronized (lock) {
            if (shuttingDown || attached != null) {
                return;
            }
            try {
                attached = attacher.apply(brokerServer);
            } catch (RuntimeException e) {
                throw new IllegalStateException("Failed to attach the Cluster Mirror extension to broker " + nodeId + ": "
                    + ClusterMirrorServer.describe(e), e);
            }
        }
        log.info("Cluster Mirror extension attached to broker {}", nodeId);
    }

    /** Before the broker shuts down: closes what is attached; nothing is attached from now on. */
    void close(int nodeId) {
        Attachment toClose;
        synchronized (lock) {
            shuttingDown = true;
            toClose = attached;
            attached = null;
            closed = toClose;
        }
        if (toClose != null) {
            try {
                toClose.close();
                log.info("Cluster Mirror extension closed on broker {}", nodeId);
            } catch (Exception e) {
                log.error("Error closing the Cluster Mirror extension on broker {}", nodeId, e);
            }
        }
    }

    /** After the broker has shut down: detaches what {@link #close} closed. */
    void detach() {
        Attachment toDetach;
        synchronized (lock) {
            toDetach = closed;
            closed = null;
        }
        if (toDetach != null) {
            toDetach.detach();
        }
    }

    private static Attachment attachExtension(Object brokerServer) {
        ClusterMirrorExtension extension = ClusterMirrorExtension.attach(BrokerHandle.of(brokerServer));
        return new Attachment() {
            @Override
            public void close() {
                extension.close();
            }

            @Override
            public void detach() {
                extension.detach();
            }
        };
    }
}
