package io.clustermirror.broker.controller;

import io.clustermirror.broker.auth.InternalOperations;
import io.clustermirror.common.InternalTopics;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What the {@link MirrorImageTailer} asks about {@code __mirror_metadata} and {@code __mirror_state} besides their
 * records: their topic ids and the configs that can lose mirror state. A seam so that the tailer can be tested with a
 * consumer test double and no cluster.
 */
interface InternalTopicsView extends AutoCloseable {
    List<String> TOPICS = List.of(InternalTopics.METADATA, InternalTopics.STATE);

    /**
     * Topic ids of both internal topics by name; empty unless both exist.
     *
     * @throws KafkaException if they cannot be described now
     */
    Map<String, String> topicIds();

    /**
     * The configs of the internal topics that can lose mirror state ({@link InternalTopics#misconfigurations}).
     *
     * @throws KafkaException if they cannot be described now
     */
    List<InternalTopics.Misconfiguration> misconfigurations();

    @Override
    void close();

    /** Through an admin client of the broker, each call an internal operation of the extension. */
    static InternalTopicsView of(Admin admin, String adminClientId) {
        return new InternalTopicsView() {
            @Override
            public Map<String, String> topicIds() {
                try (InternalOperations.Scope ignored = InternalOperations.begin(adminClientId,
                        TOPICS.stream().map(t -> InternalOperations.Operation.topic(t, AclOperation.DESCRIBE)).toList())) {
                    Map<String, String> ids = new TreeMap<>();
                    admin.describeTopics(TOPICS).topicNameValues().forEach((name, f) -> {
                        try {
                            ids.put(name, f.get(10, TimeUnit.SECONDS).topicId().toString());
                        } catch (ExecutionException e) {
                            if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                                throw new KafkaException("cannot describe " + name, e.getCause());
                            }
                        } catch (InterruptedException | TimeoutException e) {
                            throw new KafkaException("cannot describe " + name, e);
                        }
                    });
                    return ids.size() == TOPICS.size() ? Map.copyOf(ids) : Map.of();
                }
            }

            @Override
            public List<InternalTopics.Misconfiguration> misconfigurations() {
                try (InternalOperations.Scope ignored = InternalOperations.begin(adminClientId,
                        TOPICS.stream().map(t -> InternalOperations.Operation.topic(t, AclOperation.DESCRIBE_CONFIGS)).toList())) {
                    return InternalTopicsInitializer.misconfigurations(admin, TOPICS);
                } catch (ExecutionException | TimeoutException e) {
                    throw new KafkaException("cannot describe the configs of " + TOPICS, e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new KafkaException("interrupted while describing the configs of " + TOPICS, e);
                }
            }

            @Override
            public void close() {
                admin.close(Duration.ZERO);
            }
        };
    }
}
