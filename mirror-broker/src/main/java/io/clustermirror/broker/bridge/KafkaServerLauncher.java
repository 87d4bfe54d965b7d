package io.clustermirror.broker.bridge;

import kafka.server.BrokerServer;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;

import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.server.ProcessRole;
import org.apache.kafka.server.util.CommandLineUtils;

import java.io.IOException;
import java.lang.reflect.Field;
import java.util.List;
import java.util.Optional;
import java.util.Properties;

import scala.Option;

/**
 * One KRaft node (broker, controller or combined) of stock Kafka in this JVM, built exactly as
 * {@code kafka.Kafka}'s main builds it: {@code KafkaConfig} from the properties, then a
 * {@code KafkaRaftServer}. It also exposes the node's {@code BrokerServer} (typed Object) so callers
 * can wrap it with {@link BrokerHandle#of(Object)} without depending on Kafka's Scala classes.
 */
public final class KafkaServerLauncher {
    private final KafkaConfig config;
    private final KafkaRaftServer server;
    private final Optional<Object> broker;
    private final Optional<Object> controller;

    private KafkaServerLauncher(KafkaConfig config) {
        this.config = config;
        this.server = new KafkaRaftServer(config, Time.SYSTEM);
        this.broker = roleOf(server, "broker", ProcessRole.BrokerRole);
        this.controller = roleOf(server, "controller", ProcessRole.ControllerRole);
    }

    /**
     * Loads a server.properties file and applies {@code key=value} overrides on top of it, with the
     * same semantics as {@code kafka-server-start.sh <file> --override key=value}.
     */
    public static Properties loadProps(String file, List<String> overrides) throws IOException {
        Properties props = Utils.loadProps(file);
        props.putAll(CommandLineUtils.parseKeyValueArgs(overrides));
        return props;
    }

    /**
     * Validates the configs and creates the node without starting it. Fails on invalid configs and on
     * log directories that are not formatted ({@code kafka-storage.sh format}) or belong to another node.
     */
    public static KafkaServerLauncher create(Properties props) {
        return new KafkaServerLauncher(KafkaConfig.fromProps(props, false));
    }

    public int nodeId() {
        return config.nodeId();
    }

    /** The node's {@code kafka.server.BrokerServer}, if it has the broker role. */
    public Optional<Object> broker() {
        return broker;
    }

    /** The node's controller, if it has the controller role and no broker role (a dedicated controller). */
    public Optional<ControllerHandle> controllerOnly() {
        return broker.isPresent() ? Optional.empty() : controller.map(ControllerHandle::of);
    }

    /** Starts the controller (if any) then the broker (if any); on failure the node has shut itself down. */
    public void startup() {
        server.startup();
    }

    /** Shuts down the broker (controlled shutdown) then the controller; idempotent. */
    public void shutdown() {
        server.shutdown();
    }

    public void awaitShutdown() {
        server.awaitShutdown();
    }

    /**
     * Starts a {@code BrokerServer} that was shut down, reusing the same object (and its ports and log
     * dirs), as Kafka's own tests restart brokers.
     */
    public static void startupBroker(Object brokerServer) {
        asBroker(brokerServer).startup();
    }

    /** Shuts a {@code BrokerServer} down cleanly (controlled shutdown) and waits until it is down. */
    public static void shutdownBroker(Object brokerServer) {
        BrokerServer broker = asBroker(brokerServer);
        broker.shutdown();
        broker.awaitShutdown();
    }

    public static boolean isBrokerShutdown(Object brokerServer) {
        return asBroker(brokerServer).isShutdown();
    }

    private static BrokerServer asBroker(Object brokerServer) {
        if (!(brokerServer instanceof BrokerServer)) {
            throw new IllegalArgumentException("Not a kafka.server.BrokerServer: " + brokerServer);
        }
        return (BrokerServer) brokerServer;
    }

    /**
     * KafkaRaftServer keeps its broker and controller in private {@code Option} fields and offers no accessor; each role is
     * decided from {@code process.roles}, so a missing field is a Kafka upgrade to adapt to.
     */
    private Optional<Object> roleOf(KafkaRaftServer server, String fieldName, ProcessRole role) {
        try {
            Field field = KafkaRaftServer.class.getDeclaredField(fieldName);
            field.setAccessible(true);
            Option<?> component = (Option<?>) field.get(server);
            if (component.isDefined() != config.processRoles().contains(role)) {
                throw new IllegalStateException("KafkaRaftServer." + fieldName + " does not match process.roles");
            }
            return component.isDefined() ? Optional.of(component.get()) : Optional.empty();
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw new IllegalStateException("Cannot find the " + fieldName + " of KafkaRaftServer: unsupported Kafka version?", e);
        }
    }
}
