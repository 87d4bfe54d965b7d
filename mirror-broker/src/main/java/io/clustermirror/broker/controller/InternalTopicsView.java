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
     * Topic ids of the internal topics that exist, by name.
     *
     * @throws KafkaException if they cannot be described now
     */
    Map<String, String> topicIds();

    /**
     * Creates {@code __mirror_state} as {@link InternalTopics#newTopic} says, if it does not exist (one created meanwhile
     * by another broker is fine).
     *
     * @throws KafkaException if it cannot be created now
     */
    void createState();

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
                    return Map.copyOf(ids);
                }
            }

            @Override
            public void createState() {
                try (InternalOperations.Scope ignored = InternalOperations.begin(adminClientId,
                        List.of(InternalOperations.Operation.topic(InternalTopics.STATE, AclOperation.CREATE),
                            InternalOperations.Operation.topic(InternalTopics.STATE, AclOperation.DESCRIBE_CONFIGS)))) {
                    InternalTopicsInitializer.ensureExistWithSafeConfigs(admin, List.of(InternalTopics.STATE));
                } catch (ExecutionException | TimeoutException | IllegalStateException e) {
                    throw new KafkaException("cannot create " + InternalTopics.STATE, e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new KafkaException("interrupted while creating " + InternalTopics.STATE, e);
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
