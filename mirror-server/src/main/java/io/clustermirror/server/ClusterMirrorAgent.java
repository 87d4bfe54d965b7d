package io.clustermirror.server;

import io.clustermirror.broker.ControllerMirrorView;
import io.clustermirror.broker.node.ExtensionRegistry;
import io.clustermirror.broker.bridge.BrokerHandle;
import io.clustermirror.broker.bridge.ControllerHandle;
import io.clustermirror.broker.bridge.DropInWeaving;
import io.clustermirror.broker.bridge.KafkaSupport;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.instrument.Instrumentation;
import java.util.Properties;

/**
 * The Java agent of the drop-in deployment: with the Cluster Mirror jar in Kafka's classpath and
 * {@code -javaagent:<that jar>} in {@code KAFKA_OPTS}, a node that Kafka's own scripts start ({@code kafka.Kafka
 * server.properties}) is a destination node with what the launcher ({@link ClusterMirrorServer}) gives it:
 * <ul>
 *   <li>before Kafka reads its configuration: the Kafka version check, and the read-only authorizer installed or
 *       checked exactly as the launcher does ({@link ReadOnlyAuthorizerSetup}: safe with no mirror-specific
 *       configuration, another authorizer refused);</li>
 *   <li>while the broker starts: the extension attached through the same {@link ExtensionLifecycle} as the
 *       launcher's, and the node shut down if that fails;</li>
 *   <li>when the broker shuts down: the extension closed before, and detached after;</li>
 *   <li>on a controller-only node: the controller's view of the mirror topics ({@link ControllerMirrorView}) started
 *       once the controller has, closed once it is down.</li>
 * </ul>
 * Anything refused stops the node with a one-line {@code ERROR:} on standard error, as the launcher prints it, and
 * Kafka's own fatal log line. Kafka's other tools that get the same {@code KAFKA_OPTS} are left alone.
 */
public final class ClusterMirrorAgent implements DropInWeaving.Hooks {
    private static final Logger log = LoggerFactory.getLogger(ClusterMirrorAgent.class);
    static final String NAME = "the Cluster Mirror agent";

    private final ExtensionLifecycle extension = new ExtensionLifecycle(ExtensionLifecycle.CLUSTER_MIRROR_EXTENSION);
    /** Whether the node is a controller-only one ({@code process.roles=controller}); set before it starts. */
    private volatile boolean controllerOnly;
    private volatile ControllerMirrorView controllerView;

    private ClusterMirrorAgent() {
    }

    /** The agent's entry point ({@code Premain-Class}), run before {@code kafka.Kafka}'s main. */
    public static void premain(String args, Instrumentation instrumentation) {
        DropInWeaving.install(instrumentation, new ClusterMirrorAgent());
    }

    @Override
    public void configuring(Properties serverProps) {
        try {
            KafkaSupport.requireSupported(log::warn);
            ExtensionRegistry.expectAttachments(NAME);
            ExtensionRegistry.expectControllerViews();
            ReadOnlyAuthorizerSetup.apply(serverProps);
            controllerOnly = !serverProps.getProperty("process.roles", "").contains("broker");
        } catch (RuntimeException | LinkageError e) {
            throw refuse(e);
        }
        log.info("Cluster Mirror {} agent on Kafka {}: authorizer.class.name={}", KafkaSupport.clusterMirrorVersion(),
            KafkaSupport.running(), serverProps.getProperty(ReadOnlyAuthorizerSetup.AUTHORIZER_CLASS_NAME));
    }

    @Override
    public void brokerStarting(BrokerHandle broker) {
        extension.attachWhileStarting(broker.brokerServer(), broker.nodeId());
    }

    @Override
    public void brokerStarted(BrokerHandle broker) {
        try {
            extension.attach(broker.brokerServer(), broker.nodeId());
        } catch (RuntimeException | LinkageError e) {
            throw refuse(e);
        }
    }

    @Override
    public void brokerShuttingDown(BrokerHandle broker) {
        extension.close(broker.nodeId());
    }

    @Override
    public void brokerShutDown(BrokerHandle broker) {
        extension.detach();
    }

    @Override
    public void controllerStarted(Object controllerServer) {
        if (controllerOnly) {
            controllerView = ControllerMirrorView.start(ControllerHandle.of(controllerServer));
        }
    }

    @Override
    public void controllerShutDown(Object controllerServer) {
        ControllerMirrorView view = controllerView;
        if (view != null) {
            view.close();
        }
    }

    /**
     * Prints the launcher's one-line error; Kafka then logs the exception and exits with status 1. A
     * {@link LinkageError} (a Kafka class of another shape than the one compiled against) is refused the same way.
     */
    private static RuntimeException refuse(Throwable e) {
        System.err.println("ERROR: " + ClusterMirrorServer.describe(e));
        return e instanceof RuntimeException r ? r : new IllegalStateException(ClusterMirrorServer.describe(e), e);
    }
}
