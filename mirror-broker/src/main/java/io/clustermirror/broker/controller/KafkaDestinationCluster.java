package io.clustermirror.broker.controller;

import io.clustermirror.broker.auth.InternalOperations;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.MirrorError;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

/**
 * {@link DestinationCluster} through the extension's Admin client to its own cluster. Growing a mirror topic is
 * an internal operation ({@link InternalOperations}): the admin's client id must come from
 * {@link InternalOperations#newClientId}.
 */
final class KafkaDestinationCluster implements DestinationCluster {
    private static final long TIMEOUT_MS = 30_000;
    /** Partitions created or added per request: well under the controller's 10,000 records per request. */
    static final int PARTITIONS_PER_REQUEST = 5000;
    private final Admin admin;
    private final String adminClientId;

    KafkaDestinationCluster(Admin admin, String adminClientId) {
        this.admin = admin;
        this.adminClientId = adminClientId;
    }

    @Override
    public Optional<Topic> describe(String topic) {
        try {
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(TIMEOUT_MS, TimeUnit.MILLISECONDS).get(topic);
            Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            d.partitions().forEach(p -> {
                earliest.put(new TopicPartition(topic, p.partition()), OffsetSpec.earliest());
                latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest());
            });
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> starts = admin.listOffsets(earliest).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends = admin.listOffsets(latest).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            List<Log> logs = IntStream.range(0, d.partitions().size()).mapToObj(p -> new TopicPartition(topic, p))
                .map(tp -> new Log(starts.get(tp).offset(), ends.get(tp).offset())).toList();
            return Optional.of(new Topic(logs));
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                return Optional.empty();
            }
            throw failure("describe destination topic '" + topic + "'", e.getCause());
        } catch (Exception e) {
            throw failure("describe destination topic '" + topic + "'", e);
        }
    }

    /**
     * Creates the topic in {@link #creationSteps} requests: Kafka's controller writes at most 10,000 records per
     * request (the topic, one per partition, its configs), so a bigger topic is created smaller and grown. If a
     * growth fails, the topic is deleted again, so a failed create leaves nothing behind.
     */
    @Override
    public void create(String topic, int partitions, Map<String, String> configs) {
        List<Integer> steps = creationSteps(partitions);
        try {
            int brokers = admin.describeCluster().nodes().get(TIMEOUT_MS, TimeUnit.MILLISECONDS).size();
            NewTopic newTopic = new NewTopic(topic, steps.get(0), InternalTopics.replicationFactor(brokers)).configs(configs);
            admin.createTopics(List.of(newTopic)).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw failure("create destination topic '" + topic + "'", e.getCause());
        } catch (Exception e) {
            throw failure("create destination topic '" + topic + "'", e);
        }
        try {
            steps.subList(1, steps.size()).forEach(total -> createPartitions(topic, total));
        } catch (ClusterMirrorException e) {
            delete(topic);
            throw e;
        }
    }

    /**
     * The partition counts after each request that creates a topic of {@code partitions}: the first creates at most
     * {@link #PARTITIONS_PER_REQUEST}, each further one grows it by at most as many; the last is {@code partitions}.
     */
    static List<Integer> creationSteps(int partitions) {
        List<Integer> steps = new ArrayList<>();
        for (int n = Math.min(partitions, PARTITIONS_PER_REQUEST); ; n = Math.min(partitions, n + PARTITIONS_PER_REQUEST)) {
            steps.add(n);
            if (n >= partitions) {
                return steps;
            }
        }
    }

    @Override
    public void delete(String topic) {
        try {
            admin.deleteTopics(List.of(topic)).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw failure("delete destination topic '" + topic + "'", e.getCause());
        } catch (Exception e) {
            throw failure("delete destination topic '" + topic + "'", e);
        }
    }

    @Override
    public void createPartitions(String topic, int totalPartitions) {
        try (InternalOperations.Scope ignored = InternalOperations.begin(adminClientId,
                List.of(InternalOperations.Operation.topic(topic, AclOperation.ALTER)))) {
            admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(totalPartitions))).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw failure("grow destination topic '" + topic + "' to " + totalPartitions + " partitions", e.getCause());
        } catch (Exception e) {
            throw failure("grow destination topic '" + topic + "' to " + totalPartitions + " partitions", e);
        }
    }

    private static ClusterMirrorException failure(String what, Throwable cause) {
        if (cause instanceof InterruptedException) {
            Thread.currentThread().interrupt();
        }
        return new ClusterMirrorException(MirrorError.UNKNOWN_SERVER_ERROR,
            "could not " + what + " on the destination cluster: " + cause, cause);
    }
}
