package io.clustermirror.broker.node;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.util.HashMap;
import java.util.Map;

/**
 * Builds the extension's clients to its own (destination) cluster. They connect to this broker's
 * inter-broker listener; broker configs prefixed {@value #PREFIX} (e.g.
 * {@code cluster.mirror.local.security.protocol}) are passed to them, so a secured cluster works.
 */
public final class LocalClients {
    public static final String PREFIX = "cluster.mirror.local.";

    private final Map<String, Object> base;

    public LocalClients(String bootstrapServers, Map<String, ?> brokerConfigs, int nodeId) {
        Map<String, Object> m = new HashMap<>();
        brokerConfigs.forEach((k, v) -> {
            if (k.startsWith(PREFIX) && v != null) {
                m.put(k.substring(PREFIX.length()), v);
            }
        });
        m.putIfAbsent(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        m.put(CommonClientConfigs.CLIENT_ID_CONFIG, "cluster-mirror-" + nodeId);
        this.base = Map.copyOf(m);
    }

    /** The client configs of the local cluster (may hold secrets: never logged). */
    public java.util.Properties properties() {
        java.util.Properties props = new java.util.Properties();
        props.putAll(base);
        return props;
    }

    public Admin admin() {
        return Admin.create(new HashMap<>(base));
    }

    /** An admin client with its own client id (e.g. one from {@code auth.InternalOperations.newClientId}). */
    public Admin admin(String clientId) {
        Map<String, Object> m = new HashMap<>(base);
        m.put(CommonClientConfigs.CLIENT_ID_CONFIG, clientId);
        return Admin.create(m);
    }

    /** A consumer with no group: the extension assigns partitions itself. */
    public KafkaConsumer<byte[], byte[]> consumer(String clientSuffix, boolean readCommitted) {
        return consumer(clientSuffix, readCommitted, Map.of());
    }

    /** A consumer that assigns partitions itself, with extra configs (e.g. a group id for committed offsets). */
    public KafkaConsumer<byte[], byte[]> consumer(String clientSuffix, boolean readCommitted, Map<String, Object> overrides) {
        Map<String, Object> m = new HashMap<>(base);
        m.putAll(overrides);
        m.put(CommonClientConfigs.CLIENT_ID_CONFIG, base.get(CommonClientConfigs.CLIENT_ID_CONFIG) + "-" + clientSuffix);
        m.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, readCommitted ? "read_committed" : "read_uncommitted");
        m.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        m.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        // Looking for an internal topic must never create it with broker defaults (they are compacted, sized).
        m.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
        return new KafkaConsumer<>(m, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    /** An idempotent producer, or a transactional one when {@code transactionalId} is given. */
    public KafkaProducer<byte[], byte[]> producer(String clientSuffix, String transactionalId) {
        return producer(clientSuffix, transactionalId, Map.of());
    }

    /** As {@link #producer(String, String)}, with extra configs (e.g. shorter timeouts). */
    public KafkaProducer<byte[], byte[]> producer(String clientSuffix, String transactionalId, Map<String, Object> overrides) {
        Map<String, Object> m = new HashMap<>(base);
        m.putAll(overrides);
        m.put(CommonClientConfigs.CLIENT_ID_CONFIG, base.get(CommonClientConfigs.CLIENT_ID_CONFIG) + "-" + clientSuffix);
        m.put(ProducerConfig.ACKS_CONFIG, "all");
        m.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        m.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        if (transactionalId != null) {
            m.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        }
        return new KafkaProducer<>(m, new ByteArraySerializer(), new ByteArraySerializer());
    }
}
