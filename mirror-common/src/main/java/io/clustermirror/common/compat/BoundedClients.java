package io.clustermirror.common.compat;

import org.apache.kafka.clients.DefaultHostResolver;
import org.apache.kafka.clients.HostResolver;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.KafkaAdminClient;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.GroupProtocol;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.utils.Utils;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * Kafka's admin client and consumer that read no response above a {@link ResponseBound}: for clients of a cluster the
 * node does not trust with its heap (a source cluster, or a peer that only claims to be one). Kafka's own clients
 * allocate whatever size the first four bytes of a response announce, up to 2 GiB, and have no config that limits it;
 * these set the receive-buffer pool of the client's network selector ({@link BoundingMemoryPool}) before the client
 * makes its first connection. A response above the bound then costs its connection (Kafka's selector logs the error at
 * WARN with the node) and the client retries as after any disconnect.
 *
 * <p>Not covered: the responses a SASL client reads while it authenticates, which Kafka reads with a receive of its own
 * before the connection is handed to the selector.
 */
public final class BoundedClients {
    private BoundedClients() {
    }

    /**
     * An admin client as {@link Admin#create(Properties)} makes it, bounded. Its thread connects only once the bound is
     * in place: every connection first resolves its node's host through a resolver that waits for it.
     */
    public static Admin admin(Properties props, ResponseBound bound) {
        CompletableFuture<Void> bounded = new CompletableFuture<>();
        KafkaAdminClient admin = KafkaClientShapes.adminClient(new LoggedAdminClientConfig(props), new AfterBound(bounded));
        try {
            KafkaClientShapes.receiveBuffersFrom(KafkaClientShapes.networkClient(admin), new BoundingMemoryPool(bound));
        } catch (RuntimeException e) {
            bounded.completeExceptionally(e);
            admin.close(Duration.ZERO);
            throw e;
        }
        bounded.complete(null);
        return admin;
    }

    /**
     * A consumer of raw bytes, bounded, with the classic group protocol (the one whose network client is made in the
     * caller's thread and first connects in a call on it), whatever {@code props} says: for readers that assign
     * partitions and join no group.
     */
    public static KafkaConsumer<byte[], byte[]> consumer(Properties props, ResponseBound bound) {
        Properties classic = new Properties();
        classic.putAll(props);
        classic.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, GroupProtocol.CLASSIC.name().toLowerCase(Locale.ROOT));
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(classic, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        try {
            KafkaClientShapes.receiveBuffersFrom(KafkaClientShapes.networkClient(consumer), new BoundingMemoryPool(bound));
        } catch (RuntimeException e) {
            Utils.closeQuietly(consumer, "a consumer that could not be bounded");
            throw e;
        }
        return consumer;
    }

    /** Resolves hosts as Kafka's clients do, once the client's bound is in place; never if it could not be set. */
    private static final class AfterBound implements HostResolver {
        private final CompletableFuture<Void> bounded;
        private final HostResolver resolver = new DefaultHostResolver();

        AfterBound(CompletableFuture<Void> bounded) {
            this.bounded = bounded;
        }

        @Override
        public InetAddress[] resolve(String host) throws UnknownHostException {
            try {
                bounded.get();
            } catch (ExecutionException e) {
                throw new UnknownHostException("not connecting to " + host + ": the client's response bound could not be set ("
                    + e.getCause().getMessage() + ")");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new UnknownHostException("not connecting to " + host + ": interrupted before the client's response bound was set");
            }
            return resolver.resolve(host);
        }
    }

    /** The admin client's configs, logged as {@link Admin#create} logs them (Kafka masks passwords). */
    private static final class LoggedAdminClientConfig extends AdminClientConfig {
        LoggedAdminClientConfig(Properties props) {
            super(props, true);
        }
    }
}
