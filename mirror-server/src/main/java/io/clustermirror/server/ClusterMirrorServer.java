package io.clustermirror.server;

import io.clustermirror.broker.ControllerMirrorView;
import io.clustermirror.broker.node.ExtensionRegistry;
import io.clustermirror.broker.bridge.KafkaProcess;
import io.clustermirror.broker.bridge.KafkaServerLauncher;
import io.clustermirror.broker.bridge.KafkaSupport;

import org.apache.kafka.common.config.ConfigException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.function.Function;

import joptsimple.OptionParser;
import joptsimple.OptionSet;
import joptsimple.OptionSpec;

/**
 * Entry point of {@code bin/cluster-mirror-server-start.sh}: runs one KRaft node of stock Kafka, like
 * {@code kafka-server-start.sh} (same arguments, shutdown hook and exit codes), and attaches the Cluster
 * Mirror extension to its broker if the node has the broker role. A controller-only node gets a view of the mirror
 * topics instead ({@link ControllerMirrorView}), so that its authorizer keeps them read-only.
 */
public final class ClusterMirrorServer {
    private static final Logger log = LoggerFactory.getLogger(ClusterMirrorServer.class);
    static final String USAGE = "USAGE: cluster-mirror-server-start.sh server.properties [--override property=value]*";

    private final KafkaServerLauncher server;
    private final ExtensionLifecycle extension;
    /** The view of a controller-only node, once started. */
    private volatile ControllerMirrorView controllerView;

    ClusterMirrorServer(KafkaServerLauncher server, Function<Object, ExtensionLifecycle.Attachment> attacher) {
        this.server = server;
        this.extension = new ExtensionLifecycle(attacher);
    }

    /**
     * Starts the node, attaching the extension to its broker while it starts ({@link ExtensionLifecycle#attachWhileStarting}).
     * If attaching fails the node fails to start or keeps running, and the caller must shut it down: a destination broker
     * must never run without the extension.
     */
    void startup() {
        Optional<Object> broker = server.broker();
        broker.ifPresent(b -> extension.attachWhileStarting(b, server.nodeId()));
        try {
            server.startup();
        } catch (RuntimeException e) {
            extension.attachFailure().ifPresent(failure -> {
                failure.addSuppressed(e);
                throw failure; // the cause an operator can act on, not "a fatal error while waiting for ..."
            });
            throw e;
        }
        if (broker.isEmpty()) {
            server.controllerOnly().ifPresent(controller -> controllerView = ControllerMirrorView.start(controller));
            log.info("Node {} has no broker role: the Cluster Mirror extension is not attached; the controller reads the "
                + "mirror topics to keep them read-only", server.nodeId());
            return;
        }
        extension.attach(broker.get(), server.nodeId());
    }

    /**
     * Closes the extension first, so that it stops appending, then shuts the node down, then detaches the extension:
     * while the broker hands its partitions over, the read-only rule still holds and other topics take writes. A
     * controller's view is closed once the node is down.
     */
    void shutdown() {
        extension.close(server.nodeId());
        server.shutdown();
        extension.detach();
        ControllerMirrorView view = controllerView;
        if (view != null) {
            view.close();
        }
    }

    void awaitShutdown() {
        server.awaitShutdown();
    }

    /** Parses {@code server.properties [--override k=v]*} the way {@code kafka.Kafka} does. */
    static Properties parseArgs(String[] args) {
        OptionParser parser = new OptionParser(false);
        OptionSpec<String> overrideOpt = parser.accepts("override",
                "Optional property that should override values set in server.properties file (e.g. key=value)")
            .withRequiredArg()
            .ofType(String.class);
        // Listed for the help output only: like kafka.Kafka, the first argument is the properties file.
        parser.accepts("version", "Print version information and exit.");
        List<String> argList = Arrays.asList(args);
        if (argList.isEmpty() || argList.contains("--help")) {
            printUsageAndExit(parser, USAGE);
        }
        if (argList.contains("--version")) {
            printVersionAndExit();
        }
        OptionSet options = parser.parse(Arrays.copyOfRange(args, 1, args.length));
        if (!options.nonOptionArguments().isEmpty()) {
            printUsageAndExit(parser, "Found non argument parameters: " + options.nonOptionArguments());
        }
        if (!Files.isReadable(Path.of(args[0]))) {
            throw new IllegalArgumentException("Cannot read the server properties file " + args[0]);
        }
        try {
            return KafkaServerLauncher.loadProps(args[0], options.valuesOf(overrideOpt));
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read the server properties file " + args[0] + ": " + e, e);
        }
    }

    /** Prints {@code message} and the options' help, and exits with status 1, as Kafka's own commands do. */
    private static void printUsageAndExit(OptionParser parser, String message) {
        System.err.println(message);
        try {
            parser.printHelpOn(System.err);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        System.exit(1);
    }

    private static void printVersionAndExit() {
        System.out.println("Cluster Mirror " + KafkaSupport.clusterMirrorVersion() + " on Kafka " + KafkaSupport.running());
        System.exit(0);
    }

    static String describe(Throwable e) {
        if (e instanceof ConfigException) {
            return "Invalid configuration: " + e.getMessage();
        }
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        if (e instanceof LinkageError) {
            return "Kafka " + KafkaSupport.running() + " differs from what Cluster Mirror uses (" + e.getClass().getSimpleName()
                + ": " + message + "): it supports the Kafka lines " + KafkaSupport.supportedLines();
        }
        // Kafka's own hint is only on some of its meta.properties errors.
        if (message.contains("meta.properties") && !message.contains("kafka-storage.sh")) {
            message += " (format the log directories with bin/kafka-storage.sh format first)";
        }
        return message;
    }

    /** Logs the failure with its stack trace and prints it as one line, then exits with status 1. */
    private static void exitWithError(String what, Throwable e) {
        log.error("{}", what, e);
        System.err.println("ERROR: " + describe(e));
        System.exit(1);
    }

    public static void main(String[] args) {
        ClusterMirrorServer node;
        try {
            KafkaSupport.requireSupported(log::warn);
            log.info("Cluster Mirror {} launcher on Kafka {}", KafkaSupport.clusterMirrorVersion(), KafkaSupport.running());
            ExtensionRegistry.expectAttachments("the launcher");
            ExtensionRegistry.expectControllerViews();
            node = new ClusterMirrorServer(KafkaServerLauncher.create(ReadOnlyAuthorizerSetup.apply(parseArgs(args))),
                ExtensionLifecycle.CLUSTER_MIRROR_EXTENSION);
        } catch (Throwable e) {
            exitWithError("Exiting due to invalid configuration or unformatted log directories", e);
            return;
        }
        KafkaProcess.logTerminatingSignals(log);
        // Catches terminating signals as well as normal termination.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.shutdown();
            } catch (Throwable e) {
                log.error("Halting: shutdown failed", e);
                // exit() may deadlock when called from a shutdown hook.
                Runtime.getRuntime().halt(1);
            }
        }, "cluster-mirror-shutdown-hook"));
        try {
            node.startup();
        } catch (Throwable e) {
            // The hook shuts the node down on exit.
            exitWithError("Exiting due to fatal exception during startup", e);
            return;
        }
        node.awaitShutdown();
        System.exit(0);
    }
}
