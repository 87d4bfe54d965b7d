package io.clustermirror.broker.bridge;

import java.util.List;

/**
 * Receives this broker's leadership changes. Called on Kafka's single metadata loader thread:
 * implementations must only enqueue work and return at once (never block the loader).
 * The first call after installation lists every local partition.
 */
@FunctionalInterface
public interface LeadershipListener {
    void onLeadershipChanges(List<LeaderChange> changes);
}
