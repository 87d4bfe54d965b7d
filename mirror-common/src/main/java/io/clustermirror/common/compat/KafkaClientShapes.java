package io.clustermirror.common.compat;

import org.apache.kafka.clients.ApiVersions;
import org.apache.kafka.clients.FetchSessionHandler;
import org.apache.kafka.clients.ClientUtils;
import org.apache.kafka.clients.ManualMetadataUpdater;
import org.apache.kafka.clients.MetadataRecoveryStrategy;
import org.apache.kafka.clients.MetadataUpdater;
import org.apache.kafka.clients.NetworkClient;
import org.apache.kafka.clients.HostResolver;
import org.apache.kafka.clients.KafkaClient;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.KafkaAdminClient;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.memory.MemoryPool;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.network.Selectable;
import org.apache.kafka.common.network.Selector;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;

import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.clustermirror.common.compat.Reflection.accessibleField;
import static io.clustermirror.common.compat.Reflection.accessibleMethod;
import static io.clustermirror.common.compat.Reflection.constructor;
import static io.clustermirror.common.compat.Reflection.constructorOrNull;
import static io.clustermirror.common.compat.Reflection.firstClass;
import static io.clustermirror.common.compat.Reflection.invoke;
import static io.clustermirror.common.compat.Reflection.method;
import static io.clustermirror.common.compat.Reflection.methodOrNull;
import static io.clustermirror.common.compat.Reflection.newInstance;
import static io.clustermirror.common.compat.Reflection.optionalClass;

/**
 * The shapes of Kafka's client internals that differ between the supported Kafka lines, bound once for the line this
 * JVM runs. Everything else in this package refers to Kafka directly, with shapes every supported line shares.
 *
 * <ul>
 *   <li>{@code LogContext} moved from {@code org.apache.kafka.common.utils} to {@code ...utils.internals} in 4.4, so
 *       every constructor or method that takes one differs: the network client, its selector and channel builder, the
 *       fetch session handler.</li>
 *   <li>{@code NetworkClient}'s constructors gained a bootstrap configuration and a metadata check flag in 4.4.</li>
 *   <li>The record classes ({@code MemoryRecords}, {@code BaseRecords}) moved from {@code org.apache.kafka.common.record}
 *       to {@code ...record.internal} in 4.3, which changes the return type of the fetch response's records.</li>
 *   <li>The Admin API could not list or alter share-group offsets in 4.0 (share groups were early access there); where
 *       it cannot, the calls here fail with {@link UnsupportedVersionException}, as a broker without the API would.</li>
 *   <li>The Admin API's share-group offsets were {@code OffsetAndMetadata} in 4.1 and became {@code SharePartitionOffsetInfo}
 *       (start offset, lag, leader epoch) in 4.2.</li>
 * </ul>
 *
 * <p>It also binds, the same in every supported line, the private members through which {@link BoundedClients} bounds
 * what an admin client or consumer reads: no public config of Kafka's clients does.
 *
 * <p>Binding fails with an {@link IllegalStateException} naming the shape that no candidate matched, which a node
 * reports at start ({@link #check()}).
 */
public final class KafkaClientShapes {
    private static final Class<?> LOG_CONTEXT = firstClass("LogContext", "org.apache.kafka.common.utils.internals.LogContext",
        "org.apache.kafka.common.utils.LogContext");
    private static final Class<?> MEMORY_RECORDS = firstClass("MemoryRecords",
        "org.apache.kafka.common.record.internal.MemoryRecords", "org.apache.kafka.common.record.MemoryRecords");
    private static final Constructor<?> LOG_CONTEXT_NEW = constructor(LOG_CONTEXT, String.class);
    private static final Method LOG_CONTEXT_LOGGER = method(LOG_CONTEXT, "logger", Class.class);
    private static final Constructor<?> FETCH_SESSION_HANDLER_NEW = constructor(FetchSessionHandler.class, LOG_CONTEXT,
        int.class);
    private static final Method CREATE_CHANNEL_BUILDER = method(ClientUtils.class,
        "createChannelBuilder", AbstractConfig.class, Time.class, LOG_CONTEXT);
    private static final Constructor<?> SELECTOR_NEW = constructor(Selector.class, int.class, long.class, Metrics.class,
        Time.class, String.class, Map.class, boolean.class, ChannelBuilder.class, LOG_CONTEXT);
    private static final Method PARTITION_RECORDS = method(FetchResponseData.PartitionData.class, "records");
    private static final Method MEMORY_RECORDS_BUFFER = method(MEMORY_RECORDS, "buffer");
    private static final NetworkClientShape NETWORK_CLIENT = NetworkClientShape.bind();
    /** Absent in 4.0, whose share groups (early access) the Admin API could not list offsets of. */
    private static final Class<?> SHARE_OFFSETS_RESULT =
        optionalClass("org.apache.kafka.clients.admin.ListShareGroupOffsetsResult");
    private static final Method LIST_SHARE_OFFSETS = SHARE_OFFSETS_RESULT == null ? null
        : method(Admin.class, "listShareGroupOffsets", Map.class);
    private static final Constructor<?> SHARE_OFFSETS_SPEC_NEW = SHARE_OFFSETS_RESULT == null ? null
        : constructor(firstClass("ListShareGroupOffsetsSpec", "org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec"));
    private static final Method ALTER_SHARE_OFFSETS = SHARE_OFFSETS_RESULT == null ? null
        : method(Admin.class, "alterShareGroupOffsets", String.class, Map.class);
    private static final Method ALTER_SHARE_OFFSETS_ALL = ALTER_SHARE_OFFSETS == null ? null
        : method(ALTER_SHARE_OFFSETS.getReturnType(), "all");
    /** 4.2 and later: per partition a SharePartitionOffsetInfo; null on 4.1, whose result gives OffsetAndMetadata. */
    private static final Method SHARE_OFFSET_INFOS = SHARE_OFFSETS_RESULT == null ? null
        : methodOrNull(SHARE_OFFSETS_RESULT, "partitionsToOffsetInfo", String.class);
    private static final Method SHARE_START_OFFSET = SHARE_OFFSET_INFOS == null ? null
        : method(firstClass("SharePartitionOffsetInfo", "org.apache.kafka.clients.admin.SharePartitionOffsetInfo"),
            "startOffset");
    private static final Method SHARE_OFFSETS_AND_METADATA = SHARE_OFFSETS_RESULT == null || SHARE_OFFSET_INFOS != null
        ? null : method(SHARE_OFFSETS_RESULT, "partitionsToOffsetAndMetadata", String.class);
    /** Admin.create's own factory, with the host resolver every connection of the client resolves its node through. */
    private static final Method ADMIN_CREATE = accessibleMethod(KafkaAdminClient.class, "createInternal", AdminClientConfig.class,
        firstClass("KafkaAdminClient.TimeoutProcessorFactory", "org.apache.kafka.clients.admin.KafkaAdminClient$TimeoutProcessorFactory"),
        HostResolver.class);
    private static final Field ADMIN_NETWORK_CLIENT = accessibleField(KafkaAdminClient.class, "client");
    private static final Field CONSUMER_DELEGATE = accessibleField(KafkaConsumer.class, "delegate");
    private static final Class<?> CLASSIC_CONSUMER = firstClass("ClassicKafkaConsumer",
        "org.apache.kafka.clients.consumer.internals.ClassicKafkaConsumer");
    private static final Field CLASSIC_CONSUMER_CLIENT = accessibleField(CLASSIC_CONSUMER, "client");
    private static final Field CONSUMER_NETWORK_CLIENT = accessibleField(firstClass("ConsumerNetworkClient",
        "org.apache.kafka.clients.consumer.internals.ConsumerNetworkClient"), "client");
    private static final Field NETWORK_CLIENT_SELECTOR = accessibleField(NetworkClient.class, "selector");
    /** Where every channel the selector builds later takes its receive buffers from. */
    private static final Field SELECTOR_MEMORY_POOL = accessibleField(Selector.class, "memoryPool");

    private KafkaClientShapes() {
    }

    /**
     * Binds every shape now (class initialisation does), so that a Kafka whose client internals match none of the
     * known shapes is named at start.
     *
     * @throws IllegalStateException (from class initialisation, as the cause of an {@link ExceptionInInitializerError})
     */
    public static void check() {
        // Reaching here means the static initialiser bound every shape.
    }

    /** A Kafka {@code LogContext} with {@code prefix}, of the running line's class. */
    static Object logContext(String prefix) {
        return newInstance(LOG_CONTEXT_NEW, prefix);
    }

    /** The logger of {@code owner} whose lines start with the prefix of {@code logContext}. */
    static Logger logger(Object logContext, Class<?> owner) {
        return (Logger) invoke(LOG_CONTEXT_LOGGER, logContext, owner);
    }

    /** Kafka's incremental fetch session state with the broker {@code nodeId}. */
    static FetchSessionHandler fetchSessionHandler(Object logContext, int nodeId) {
        return (FetchSessionHandler) newInstance(FETCH_SESSION_HANDLER_NEW, logContext, nodeId);
    }

    static ChannelBuilder channelBuilder(AbstractConfig config, Time time, Object logContext) {
        return (ChannelBuilder) invoke(CREATE_CHANNEL_BUILDER, null, config, time, logContext);
    }

    static Selector selector(int maxReceiveSize, long connectionMaxIdleMs, Metrics metrics, Time time, String metricGroup,
                             Map<String, String> tags, ChannelBuilder channelBuilder, Object logContext) {
        return (Selector) newInstance(SELECTOR_NEW, maxReceiveSize, connectionMaxIdleMs, metrics, time, metricGroup, tags,
            false, channelBuilder, logContext);
    }

    /**
     * A network client to the nodes of {@code metadata}, which finds none itself, with the settings of a consumer's
     * (one request in flight).
     */
    static NetworkClient networkClient(Selectable selector, ManualMetadataUpdater metadata, String clientId,
                                       long reconnectBackoffMs, long reconnectBackoffMaxMs, int sendBuffer, int receiveBuffer,
                                       int requestTimeoutMs, long connectionSetupTimeoutMs, long connectionSetupTimeoutMaxMs,
                                       Time time, Object logContext) {
        return NETWORK_CLIENT.create(selector, metadata, clientId, reconnectBackoffMs, reconnectBackoffMaxMs, sendBuffer,
            receiveBuffer, requestTimeoutMs, connectionSetupTimeoutMs, connectionSetupTimeoutMaxMs, time, logContext);
    }

    /**
     * A new admin client, as {@link Admin#create} makes it, whose connections resolve their node's host through
     * {@code hosts}: the client's thread starts connecting before this returns.
     */
    static KafkaAdminClient adminClient(AdminClientConfig config, HostResolver hosts) {
        return (KafkaAdminClient) invoke(ADMIN_CREATE, null, config, null, hosts);
    }

    /** The network client of an admin client. */
    static KafkaClient networkClient(KafkaAdminClient admin) {
        return (KafkaClient) Reflection.get(ADMIN_NETWORK_CLIENT, admin);
    }

    /**
     * The network client of a classic consumer.
     *
     * @throws IllegalStateException if the consumer runs another group protocol's implementation
     */
    static KafkaClient networkClient(KafkaConsumer<?, ?> consumer) {
        Object delegate = Reflection.get(CONSUMER_DELEGATE, consumer);
        if (!CLASSIC_CONSUMER.isInstance(delegate)) {
            throw new IllegalStateException("A consumer built with group.protocol=classic runs " + delegate.getClass().getName()
                + ", not " + CLASSIC_CONSUMER.getName());
        }
        return (KafkaClient) Reflection.get(CONSUMER_NETWORK_CLIENT, Reflection.get(CLASSIC_CONSUMER_CLIENT, delegate));
    }

    /**
     * Makes every channel {@code client} connects from now on take its receive buffers from {@code pool}.
     *
     * @throws IllegalStateException if the client is not a {@link NetworkClient} over Kafka's {@link Selector}
     */
    static void receiveBuffersFrom(KafkaClient client, MemoryPool pool) {
        if (!(client instanceof NetworkClient)) {
            throw new IllegalStateException("A Kafka client's network client is a " + client.getClass().getName() + ", not a "
                + NetworkClient.class.getName());
        }
        Object selector = Reflection.get(NETWORK_CLIENT_SELECTOR, client);
        if (!(selector instanceof Selector)) {
            throw new IllegalStateException("A Kafka network client's selector is a " + selector.getClass().getName() + ", not a "
                + Selector.class.getName());
        }
        Reflection.set(SELECTOR_MEMORY_POOL, selector, pool);
    }

    /** The bytes of a fetched partition's records (position to limit), or an empty buffer when it has none. */
    static ByteBuffer recordsBuffer(FetchResponseData.PartitionData partition) {
        Object records = invoke(PARTITION_RECORDS, partition);
        if (records == null) {
            return ByteBuffer.allocate(0);
        }
        if (!MEMORY_RECORDS.isInstance(records)) {
            throw new IllegalStateException("A fetch response carried records of type " + records.getClass().getName()
                + ", not " + MEMORY_RECORDS.getName());
        }
        return (ByteBuffer) invoke(MEMORY_RECORDS_BUFFER, records);
    }

    /**
     * Per share group of {@code groupIds}: the start offset of each of its partitions (null for a partition the group has
     * no offset in), as a consumer group's committed offsets are given. Each future fails with
     * {@link UnsupportedVersionException} on a client that cannot list share-group offsets.
     */
    @SuppressWarnings("unchecked")
    public static Map<String, KafkaFuture<Map<TopicPartition, OffsetAndMetadata>>> shareGroupStartOffsets(Admin admin,
                                                                                                     Collection<String> groupIds) {
        Map<String, KafkaFuture<Map<TopicPartition, OffsetAndMetadata>>> out = new HashMap<>();
        if (LIST_SHARE_OFFSETS == null) {
            groupIds.forEach(g -> out.put(g, unsupported("list the offsets of share groups")));
            return out;
        }
        Map<String, Object> specs = new HashMap<>();
        groupIds.forEach(g -> specs.put(g, newInstance(SHARE_OFFSETS_SPEC_NEW)));
        Object result = invoke(LIST_SHARE_OFFSETS, admin, specs);
        for (String g : groupIds) {
            if (SHARE_OFFSET_INFOS == null) {
                out.put(g, (KafkaFuture<Map<TopicPartition, OffsetAndMetadata>>) invoke(SHARE_OFFSETS_AND_METADATA, result, g));
                continue;
            }
            KafkaFuture<Map<TopicPartition, Object>> infos = (KafkaFuture<Map<TopicPartition, Object>>) invoke(SHARE_OFFSET_INFOS, result, g);
            out.put(g, infos.thenApply(byPartition -> {
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                byPartition.forEach((tp, info) -> offsets.put(tp, info == null ? null
                    : new OffsetAndMetadata((Long) invoke(SHARE_START_OFFSET, info))));
                return offsets;
            }));
        }
        return out;
    }

    /**
     * Sets the start offsets of share group {@code groupId} (the group must have no members). The future fails with
     * {@link UnsupportedVersionException} on a client that cannot alter share-group offsets.
     */
    @SuppressWarnings("unchecked")
    public static KafkaFuture<Void> alterShareGroupStartOffsets(Admin admin, String groupId, Map<TopicPartition, Long> startOffsets) {
        if (ALTER_SHARE_OFFSETS == null) {
            return unsupported("alter the offsets of share groups");
        }
        return (KafkaFuture<Void>) invoke(ALTER_SHARE_OFFSETS_ALL, invoke(ALTER_SHARE_OFFSETS, admin, groupId, startOffsets));
    }

    /** A future failed as a broker without the API fails the call. */
    private static <T> KafkaFuture<T> unsupported(String what) {
        return KafkaFuture.<Void>completedFuture(null).thenApply(ignored -> {
            throw new UnsupportedVersionException("The Kafka clients on this classpath cannot " + what
                + ": the Admin API has that call from Kafka 4.1");
        });
    }

    /** The two shapes of the network client constructor taking a metadata updater. */
    private record NetworkClientShape(Constructor<?> constructor, Object[] trailing) {
        static NetworkClientShape bind() {
            List<Class<?>> common = List.of(Selectable.class, MetadataUpdater.class, String.class, int.class, long.class,
                long.class, int.class, int.class, int.class, long.class, long.class, Time.class, boolean.class,
                ApiVersions.class, LOG_CONTEXT, MetadataRecoveryStrategy.class);
            // 4.4 and later: a bootstrap configuration (disabled: the updater is manual) and the metadata cluster check.
            Class<?> bootstrap = optionalClass("org.apache.kafka.clients.BootstrapConfiguration");
            if (bootstrap != null) {
                Constructor<?> c = constructorOrNull(NetworkClient.class, concat(common, bootstrap, boolean.class));
                if (c != null) {
                    Object disabled;
                    try {
                        disabled = bootstrap.getField("DISABLED").get(null);
                    } catch (ReflectiveOperationException e) {
                        throw new IllegalStateException("Kafka's BootstrapConfiguration has no DISABLED", e);
                    }
                    return new NetworkClientShape(c, new Object[] {disabled, false});
                }
            }
            return new NetworkClientShape(Reflection.constructor(NetworkClient.class, common.toArray(Class<?>[]::new)),
                new Object[0]);
        }

        NetworkClient create(Selectable selector, ManualMetadataUpdater metadata, String clientId, long reconnectBackoffMs,
                             long reconnectBackoffMaxMs, int sendBuffer, int receiveBuffer, int requestTimeoutMs,
                             long setupTimeoutMs, long setupTimeoutMaxMs, Time time, Object logContext) {
            Object[] args = new Object[16 + trailing.length];
            Object[] first = {selector, metadata, clientId, 1, reconnectBackoffMs, reconnectBackoffMaxMs, sendBuffer,
                receiveBuffer, requestTimeoutMs, setupTimeoutMs, setupTimeoutMaxMs, time, true, new ApiVersions(), logContext,
                MetadataRecoveryStrategy.NONE};
            System.arraycopy(first, 0, args, 0, first.length);
            System.arraycopy(trailing, 0, args, first.length, trailing.length);
            return (NetworkClient) newInstance(constructor, args);
        }

        private static Class<?>[] concat(List<Class<?>> head, Class<?>... tail) {
            Class<?>[] all = head.toArray(new Class<?>[head.size() + tail.length]);
            System.arraycopy(tail, 0, all, head.size(), tail.length);
            return all;
        }
    }
}
