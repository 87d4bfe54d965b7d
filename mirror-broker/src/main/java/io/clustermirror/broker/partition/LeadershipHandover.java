package io.clustermirror.broker.partition;

import io.clustermirror.broker.node.LocalClients;
import io.clustermirror.broker.auth.InternalOperations;
import io.clustermirror.broker.auth.InternalOperations.Operation;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Moves the leadership of a destination partition to another in-sync replica, which starts a new leader epoch without
 * losing data. Stock Kafka (KRaft) starts a leader epoch only when the leader changes or a reassignment removes a
 * replica; an ISR change alone does not. How: the target becomes the preferred replica (a reassignment to the same
 * replicas in another order, which moves no data and keeps the epoch), then a preferred leader election moves the
 * leadership to it. The partition keeps the new replica order afterwards.
 */
final class LeadershipHandover implements LeaderLogProcedures.LeadershipMover {
    private static final long TIMEOUT_MS = 15_000;

    private final String clientId;
    private final Admin admin;

    LeadershipHandover(LocalClients clients, int nodeId) {
        this.clientId = InternalOperations.newClientId("cluster-mirror-handover-" + nodeId);
        this.admin = clients.admin(clientId);
    }

    /**
     * Makes {@code target} the leader of {@code tp}, whose replicas are {@code replicas} (in assignment order).
     *
     * @throws LeaderLogProcedures.StepTimeoutException if the reassignment or the election did not complete; retrying is safe
     */
    @Override
    public void moveTo(TopicPartition tp, List<Integer> replicas, int target)
            throws LeaderLogProcedures.StepTimeoutException, InterruptedException {
        List<Integer> order = new ArrayList<>();
        order.add(target);
        replicas.stream().filter(r -> r != target).forEach(order::add);
        // Both requests are authorized as ALTER on the cluster (ElectLeaders by the broker, AlterPartitionReassignments
        // by the controller, where it runs in this JVM).
        try (InternalOperations.Scope ignored = InternalOperations.begin(clientId, List.of(Operation.cluster(AclOperation.ALTER)))) {
            if (!replicas.get(0).equals(target)) {
                admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(order))))
                    .all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            }
            Optional<Throwable> error = admin.electLeaders(ElectionType.PREFERRED, Set.of(tp)).partitions()
                .get(TIMEOUT_MS, TimeUnit.MILLISECONDS).getOrDefault(tp, Optional.empty());
            if (error.isPresent()) {
                throw new LeaderLogProcedures.StepTimeoutException("the election of broker " + target + " as leader of " + tp
                    + " failed: " + error.get());
            }
        } catch (ExecutionException | TimeoutException e) {
            throw new LeaderLogProcedures.StepTimeoutException("moving the leadership of " + tp + " to broker " + target
                + " (replicas " + order + ") failed: " + (e.getCause() == null ? e : e.getCause()));
        }
    }

    @Override
    public void close() {
        admin.close();
    }
}
