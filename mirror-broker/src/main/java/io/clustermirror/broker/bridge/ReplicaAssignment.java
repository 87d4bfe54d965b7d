package io.clustermirror.broker.bridge;

import java.util.List;

/**
 * A partition's replicas as its leader knows them.
 *
 * @param replicas     in assignment order (the first is the preferred leader); during a reassignment, the replicas
 *                     being added and removed too
 * @param reassigning  a reassignment of the partition is under way
 */
public record ReplicaAssignment(List<Integer> replicas, boolean reassigning) {
    public ReplicaAssignment {
        replicas = List.copyOf(replicas);
    }
}
