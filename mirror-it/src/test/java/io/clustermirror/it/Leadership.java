package io.clustermirror.it;

import io.clustermirror.testsupport.TestCluster;
import io.clustermirror.testsupport.TestUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/** Moves the leadership of a partition to a chosen replica, on in-JVM and process clusters alike. */
final class Leadership {
    private static final Logger log = LoggerFactory.getLogger(Leadership.class);

    private Leadership() {
    }

    static TopicPartitionInfo partitionInfo(Admin admin, TopicPartition tp) throws Exception {
        return admin.describeTopics(List.of(tp.topic())).allTopicNames().get(30, TimeUnit.SECONDS).get(tp.topic())
            .partitions().get(tp.partition());
    }

    /** Waits until the broker is in the partition's ISR (e.g. it caught up with the leader after a restart). */
    static void awaitInSync(TestCluster cluster, TopicPartition tp, int broker) throws Exception {
        try (Admin admin = cluster.admin()) {
            TestUtils.waitFor(() -> partitionInfo(admin, tp).isr().stream().anyMatch(n -> n.id() == broker),
                MirrorAssertions.TIMEOUT, "broker " + broker + " in the ISR of " + tp + " on " + cluster.name());
        }
    }

    /**
     * Makes {@code broker} the leader of the partition as soon as it is in sync: preferred-replica election, after
     * reordering the replicas (a reassignment to the same replicas) if it is not the preferred one yet.
     */
    static void moveTo(TestCluster cluster, TopicPartition tp, int broker) throws Exception {
        awaitInSync(cluster, tp, broker);
        try (Admin admin = cluster.admin()) {
            List<Integer> replicas = partitionInfo(admin, tp).replicas().stream().map(Node::id).toList();
            if (replicas.get(0) != broker) {
                List<Integer> reordered = new ArrayList<>(replicas);
                reordered.remove(Integer.valueOf(broker));
                reordered.add(0, broker);
                admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(reordered)))).all().get();
                TestUtils.waitFor(() -> partitionInfo(admin, tp).replicas().get(0).id() == broker, MirrorAssertions.TIMEOUT,
                    "broker " + broker + " to be the preferred replica of " + tp);
            }
            TestUtils.waitFor(() -> {
                if (ProcessCluster.leader(admin, tp).orElse(-1) == broker) {
                    return true;
                }
                try {
                    admin.electLeaders(ElectionType.PREFERRED, Set.of(tp)).partitions().get().get(tp)
                        .ifPresent(e -> log.info("Preferred election of {} not done yet: {}", tp, e.toString()));
                } catch (ExecutionException e) {
                    log.info("Preferred election of {} not done yet: {}", tp, e.getCause().toString());
                }
                return false;
            }, MirrorAssertions.TIMEOUT, "broker " + broker + " to lead " + tp + " on " + cluster.name());
        }
    }

    /** Moves the leadership of the partition to another in-sync replica; returns the new leader. */
    static int moveAway(TestCluster cluster, TopicPartition tp) throws Exception {
        int leader = cluster.leaderOf(tp);
        int next;
        try (Admin admin = cluster.admin()) {
            next = TestUtils.waitForValue(() -> partitionInfo(admin, tp).isr().stream().map(Node::id).filter(id -> id != leader).findFirst(),
                MirrorAssertions.TIMEOUT, "another in-sync replica of " + tp + " than broker " + leader);
        }
        moveTo(cluster, tp, next);
        return next;
    }
}
