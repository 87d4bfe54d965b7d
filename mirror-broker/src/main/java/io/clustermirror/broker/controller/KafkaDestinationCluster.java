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

    @Override
    public void create(String topic, int partitions, Map<String, String> configs) {
        try {
            int brokers = admin.describeCluster().nodes().get(TIMEOUT_MS, TimeUnit.MILLISECONDS).size();
            NewTopic newTopic = new NewTopic(topic, partitions, InternalTopics.replicationFactor(brokers)).configs(configs);
            admin.createTopics(List.of(newTopic)).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw failure("create destination topic '" + topic + "'", e.getCause());
        } catch (Exception e) {
            throw failure("create destination topic '" + topic + "'", e);
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
