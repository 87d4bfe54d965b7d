package io.clustermirror.broker.bridge;

import kafka.server.ControllerServer;

import org.apache.kafka.common.Endpoint;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.metadata.BrokerRegistration;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What the read-only rule needs of a controller-only node ({@code process.roles=controller}): its identity, configs and
 * metrics, and the listeners of the brokers registered in its metadata image, through which it reads the mirror state.
 */
public final class ControllerHandle {
    private final ControllerServer controller;

    private ControllerHandle(ControllerServer controller) {
        this.controller = controller;
    }

    /** Wraps a started {@code kafka.server.ControllerServer}. */
    public static ControllerHandle of(Object controllerServer) {
        if (!(controllerServer instanceof ControllerServer c)) {
            throw new IllegalArgumentException("Not a kafka.server.ControllerServer: " + controllerServer);
        }
        return new ControllerHandle(c);
    }

    public int nodeId() {
        return controller.config().nodeId();
    }

    public String clusterId() {
        return controller.clusterId();
    }

    /** The node's original configs (for {@code cluster.mirror.*} settings). Contains secrets: never log it. */
    public Map<String, Object> configs() {
        return controller.config().originals();
    }

    /** The name of the listener the brokers use among themselves, as this node's configs say ({@code inter.broker.listener.name}). */
    public String interBrokerListenerName() {
        return controller.config().interBrokerListenerName().value();
    }

    /** The directory of this node's metadata log: it lives as long as the node. */
    public Path metadataLogDir() {
        return Path.of(controller.config().metadataLogDir());
    }

    /** Kafka's metrics registry of this node (reported through JMX). */
    public Metrics metrics() {
        return controller.metrics();
    }

    /** The listeners of the unfenced brokers in this node's metadata image, in broker id order (empty before any registers). */
    public List<Endpoint> brokerEndpoints() {
        MetadataImage image = ServerShapes.metadataImage(controller);
        List<Endpoint> endpoints = new ArrayList<>();
        if (image == null) {
            return endpoints;
        }
        for (BrokerRegistration broker : new java.util.TreeMap<>(image.cluster().brokers()).values()) {
            if (!broker.fenced()) {
                endpoints.addAll(broker.listeners().values());
            }
        }
        return endpoints;
    }
}
