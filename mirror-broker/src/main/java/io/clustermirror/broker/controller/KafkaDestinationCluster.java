package io.clustermirror.broker.controller;

import io.clustermirror.broker.auth.InternalOperations;
import io.clustermirror.common.ChunkedListOffsets;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.MirrorError;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

/**
 * {@link DestinationCluster} through the extension's Admin client to its own cluster. Growing a mirror topic is
 * an internal operation ({@link InternalOperations}): the admin's client id must come from
 * {@link InternalOperations#newClientId}.
 */
final class KafkaDestinationCluster implements DestinationCluster {
    private static final Logger log = LoggerFactory.getLogger(KafkaDestinationCluster.class);
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
    public Map<String, Topic> describe(Collection<String> topics) {
        if (topics.isEmpty()) {
            return Map.of();
        }
        try {
            Map<String, TopicDescription> existing = new HashMap<>();
            for (Map.Entry<String, KafkaFuture<TopicDescription>> e : admin.describeTopics(topics).topicNameValues().entrySet()) {
                try {
                    existing.put(e.getKey(), e.getValue().get(TIMEOUT_MS, TimeUnit.MILLISECONDS));
                } catch (ExecutionException notThere) {
                    if (!(notThere.getCause() instanceof UnknownTopicOrPartitionException)) {
                        throw failure("describe destination topic '" + e.getKey() + "'", notThere.getCause());
                    }
                }
            }
            Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            existing.values().forEach(d -> d.partitions().forEach(p -> {
                earliest.put(new TopicPartition(d.name(), p.partition()), OffsetSpec.earliest());
                latest.put(new TopicPartition(d.name(), p.partition()), OffsetSpec.latest());
            }));
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> starts = earliest.isEmpty() ? Map.of()
                : ChunkedListOffsets.all(admin, earliest, new ListOffsetsOptions()).get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends = latest.isEmpty() ? Map.of()
                : ChunkedListOffsets.all(admin, latest, new ListOffsetsOptions()).get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            Map<String, Topic> described = new HashMap<>();
            existing.forEach((name, d) -> described.put(name, new Topic(IntStream.range(0, d.partitions().size())
                .mapToObj(p -> new TopicPartition(name, p))
                .map(tp -> new Log(starts.get(tp).offset(), ends.get(tp).offset())).toList())));
            return described;
        } catch (ExecutionException e) {
            throw failure("describe " + topics.size() + " destination topic(s)", e.getCause());
        } catch (ClusterMirrorException e) {
            throw e;
        } catch (Exception e) {
            throw failure("describe " + topics.size() + " destination topic(s)", e);
        }
    }

    /**
     * Creates the topics in requests of at most {@link #PARTITIONS_PER_REQUEST} partitions, as many topics per request as
     * fit: Kafka's controller writes at most 10,000 records per request (a topic, one per partition, its configs). A topic
     * bigger than that is created smaller and grown ({@link #creationSteps}). If any request fails, every topic created
     * so far is deleted again, so a failed create leaves nothing behind.
     */
    @Override
    public void create(List<NewTopicSpec> topics) {
        List<String> created = new ArrayList<>();
        try {
            short replicationFactor = InternalTopics.replicationFactor(
                admin.describeCluster().nodes().get(TIMEOUT_MS, TimeUnit.MILLISECONDS).size());
            for (List<NewTopicSpec> request : requests(topics)) {
                createTopics(request, replicationFactor, created);
            }
            for (NewTopicSpec t : topics) {
                List<Integer> steps = creationSteps(t.partitions());
                steps.subList(1, steps.size()).forEach(total -> createPartitions(t.topic(), total));
            }
        } catch (ExecutionException e) {
            throw deleteAgain(created, failure("create " + topics.size() + " destination topic(s)", e.getCause()));
        } catch (ClusterMirrorException e) {
            throw deleteAgain(created, e);
        } catch (Exception e) {
            throw deleteAgain(created, failure("create " + topics.size() + " destination topic(s)", e));
        }
    }

    /** One CreateTopics request; adds each topic it created to {@code created}, then fails if any other was not. */
    private void createTopics(List<NewTopicSpec> request, short replicationFactor, List<String> created) throws Exception {
        List<NewTopic> newTopics = request.stream().map(t ->
            new NewTopic(t.topic(), creationSteps(t.partitions()).get(0), replicationFactor).configs(t.configs())).toList();
        Map<String, KafkaFuture<Void>> results = admin.createTopics(newTopics).values();
        ClusterMirrorException first = null;
        for (NewTopicSpec t : request) {
            try {
                results.get(t.topic()).get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
                created.add(t.topic());
            } catch (ExecutionException e) {
                if (first == null) {
                    first = failure("create destination topic '" + t.topic() + "'", e.getCause());
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /**
     * The topics grouped into CreateTopics requests in their order: each request creates at most
     * {@link #PARTITIONS_PER_REQUEST} partitions (a bigger topic's first step alone, see {@link #creationSteps}).
     */
    static List<List<NewTopicSpec>> requests(List<NewTopicSpec> topics) {
        List<List<NewTopicSpec>> requests = new ArrayList<>();
        List<NewTopicSpec> request = new ArrayList<>();
        int partitions = 0;
        for (NewTopicSpec t : topics) {
            int first = creationSteps(t.partitions()).get(0);
            if (!request.isEmpty() && partitions + first > PARTITIONS_PER_REQUEST) {
                requests.add(request);
                request = new ArrayList<>();
                partitions = 0;
            }
            request.add(t);
            partitions += first;
        }
        if (!request.isEmpty()) {
            requests.add(request);
        }
        return requests;
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

    /** Deletes the topics a failed create made, best effort (the failure says what went wrong), and returns the failure. */
    private ClusterMirrorException deleteAgain(List<String> created, ClusterMirrorException failure) {
        if (!created.isEmpty()) {
            try {
                admin.deleteTopics(created).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            } catch (Exception e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                failure.addSuppressed(e);
                log.error("Could not delete the destination topics {} that a failed start created; delete them before starting "
                    + "them again: {}", created, e.toString());
            }
        }
        return failure;
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
