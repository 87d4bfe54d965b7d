package io.clustermirror.server;

import io.clustermirror.broker.ClusterMirrorExtension;
import io.clustermirror.broker.node.ExtensionRegistry;
import io.clustermirror.broker.bridge.BrokerHandle;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Optional;
import java.util.function.Function;

/**
 * The extension's life on one broker, the same whichever way the node was started (the launcher, or Kafka's own
 * scripts with the agent): attached while the broker starts, by its authorizer before it opens the client listeners
 * ({@link #attachWhileStarting}), or else once the broker has started ({@link #attach}); closed before the broker shuts down (it stops
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
    private IllegalStateException attachFailure;

    ExtensionLifecycle(Function<Object, Attachment> attacher) {
        this.attacher = attacher;
    }

    /**
     * Before the broker starts: lets its authorizer attach the extension while the broker starts, so that the broker opens
     * its client listeners only once the extension has loaded the mirror image. {@link #attach} after the start then finds
     * it attached, or attaches it if the authorizer did not (or failed to).
     */
    void attachWhileStarting(Object brokerServer, int nodeId) {
        ExtensionRegistry.attachWhileStarting(BrokerHandle.of(brokerServer).clusterId(), nodeId, () -> attach(brokerServer, nodeId));
    }

    /**
     * Attaches to a broker (while it starts, or once it has started), unless something is attached already or the shutdown has begun.
     *
     * @throws IllegalStateException if attaching failed: the caller must shut the node down, a destination broker must
     *                               never run without the extension
     */
    void attach(Object brokerServer, int nodeId) {
        ExtensionRegistry.takeStartupAttach(BrokerHandle.of(brokerServer).clusterId(), nodeId); // no longer needed
        synchronized (lock) {
            if (shuttingDown || attached != null) {
                return;
            }
            try {
                attached = attacher.apply(brokerServer);
            } catch (RuntimeException e) {
                attachFailure = new IllegalStateException("Failed to attach the Cluster Mirror extension to broker " + nodeId
                    + ": " + ClusterMirrorServer.describe(e), e);
                throw attachFailure;
            }
        }
        log.info("Cluster Mirror extension attached to broker {}", nodeId);
    }

    /**
     * The last failure of {@link #attach}: while the broker starts, it surfaces in Kafka's start-up as a failed
     * authorizer future, whose message does not say why.
     */
    Optional<IllegalStateException> attachFailure() {
        synchronized (lock) {
            return Optional.ofNullable(attachFailure);
        }
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
