package io.clustermirror.broker.fetch;

import io.clustermirror.common.fetch.FetchClients;
import org.apache.kafka.clients.ClientRequest;
import org.apache.kafka.clients.ClientResponse;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorError;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.NetworkClient;
import org.apache.kafka.clients.NetworkClientUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * Reads the stored batches of one partition of a Kafka cluster, as they are (consumer Fetch, read_uncommitted, up to
 * the high watermark): what a comparison of two logs needs, CRCs and control batches included. One-shot reads for
 * alignment and repair, never the mirroring data path. Not thread-safe; close it after use.
 */
public final class ClusterLogReader implements AutoCloseable {
    private static final int MAX_BYTES = 1024 * 1024;
    /** One response: {@link #MAX_BYTES}, or one larger batch (Kafka returns the first batch whole). */
    private static final int MAX_RESPONSE_BYTES = MAX_BYTES + 16 * 1024 * 1024;

    private final Properties clientProperties;
    private final String clientId;
    private final Duration timeout;
    private final Time time = Time.SYSTEM;
    private final Metrics metrics = new Metrics();
    private final LogContext logContext;
    private final Admin admin;
    private final Map<Integer, NetworkClient> clients = new HashMap<>();
    private int lastLeader = -1;

    /**
     * @param clientProperties the cluster's client configs (bootstrap servers, security); may hold secrets, never logged
     * @param timeout          how long one read may take, metadata and connection included
     */
    public ClusterLogReader(Properties clientProperties, String clientId, Duration timeout) {
        this.clientProperties = clientProperties;
        this.clientId = clientId;
        this.timeout = timeout;
        io.clustermirror.common.ListenerProbe.check(clientProperties);
        this.logContext = new LogContext("[ClusterLogReader " + clientId + "] ");
        Properties adminProps = new Properties();
        adminProps.putAll(clientProperties);
        adminProps.put(CommonClientConfigs.CLIENT_ID_CONFIG, clientId + "-admin");
        this.admin = Admin.create(adminProps);
    }

    /**
     * The batches that hold offsets in {@code [from, to)}, in offset order; fewer when the log starts later or ends
     * earlier (below its log start and at its high watermark the log has nothing to show).
     *
     * @throws KafkaException with the cause when the cluster cannot be read within the timeout
     */
    public List<RecordBatch> batches(TopicPartition tp, long from, long to) {
        return read(tp, null, from, to);
    }

    /**
     * {@link #batches(TopicPartition, long, long)} of the topic with id {@code topicId} only.
     *
     * @throws ClusterMirrorException {@link MirrorError#SOURCE_TOPIC_ID_CHANGED} when the topic of that name has another id
     *                                (deleted and re-created): its batches say nothing about the one that was mirrored
     */
    public List<RecordBatch> batches(TopicPartition tp, Uuid topicId, long from, long to) {
        return read(tp, topicId, from, to);
    }

    private List<RecordBatch> read(TopicPartition tp, Uuid expectedTopicId, long from, long to) {
        long deadline = time.milliseconds() + timeout.toMillis();
        Leader leader = leader(tp, deadline);
        if (expectedTopicId != null && !expectedTopicId.equals(leader.topicId)) {
            throw new ClusterMirrorException(MirrorError.SOURCE_TOPIC_ID_CHANGED, "source topic " + tp.topic() + " was deleted "
                + "and re-created (id " + leader.topicId + ", mirrored " + expectedTopicId + "): its batches are not compared "
                + "with the mirrored ones");
        }
        lastLeader = leader.node.id();
        List<RecordBatch> out = new ArrayList<>();
        long position = Math.max(from, leader.logStartOffset);
        while (position < to) {
            FetchResponseData.PartitionData pd = fetch(tp, leader, position, deadline);
            Errors error = Errors.forCode(pd.errorCode());
            if (error == Errors.OFFSET_OUT_OF_RANGE) {
                long start = listOffset(tp, OffsetSpec.earliest(), deadline);
                if (position >= start) {
                    break; // at or above the end
                }
                position = start;
                continue;
            }
            if (error != Errors.NONE) {
                throw new KafkaException("reading " + tp + " at offset " + position + " from broker " + leader.node.id()
                    + " failed with " + error.name());
            }
            Records records = FetchResponse.recordsOrFail(pd);
            long next = position;
            for (RecordBatch b : ((MemoryRecords) records).batches()) {
                b.ensureValid();
                if (b.lastOffset() >= from && b.baseOffset() < to) {
                    out.add(b);
                }
                next = b.nextOffset();
            }
            if (next == position) {
                break; // nothing more up to the high watermark
            }
            position = next;
        }
        return out;
    }

    /** The broker the last {@link #batches} call read from (the partition's leader then), or -1. */
    public int lastLeader() {
        return lastLeader;
    }

    private record Leader(Node node, Uuid topicId, long logStartOffset) {
    }

    private Leader leader(TopicPartition tp, long deadline) {
        TopicDescription d = await(admin.describeTopics(List.of(tp.topic())).allTopicNames(), deadline).get(tp.topic());
        if (d.partitions().size() <= tp.partition()) {
            throw new KafkaException(tp + " does not exist (the topic has " + d.partitions().size() + " partitions)");
        }
        Node node = d.partitions().get(tp.partition()).leader();
        if (node == null || node.isEmpty()) {
            throw new KafkaException(tp + " has no leader");
        }
        return new Leader(node, d.topicId(), listOffset(tp, OffsetSpec.earliest(), deadline));
    }

    private long listOffset(TopicPartition tp, OffsetSpec spec, long deadline) {
        return await(admin.listOffsets(Map.of(tp, spec)).partitionResult(tp), deadline).offset();
    }

    private FetchResponseData.PartitionData fetch(TopicPartition tp, Leader leader, long offset, long deadline) {
        NetworkClient client = clients.computeIfAbsent(leader.node.id(), id -> FetchClients.to(leader.node, clientProperties,
            clientId, (int) timeout.toMillis(), MAX_RESPONSE_BYTES, metrics, "cluster-mirror-log-reader", Map.of("client-id", clientId),
            logContext));
        Map<TopicPartition, FetchRequest.PartitionData> data = Map.of(tp, new FetchRequest.PartitionData(leader.topicId, offset,
            FetchRequest.INVALID_LOG_START_OFFSET, MAX_BYTES, Optional.empty(), Optional.empty()));
        FetchRequest.Builder request = FetchRequest.Builder.forConsumer(ApiKeys.FETCH.latestVersion(), 0, 0, data)
            .isolationLevel(IsolationLevel.READ_UNCOMMITTED)
            .setMaxBytes(MAX_BYTES);
        try {
            if (!NetworkClientUtils.awaitReady(client, leader.node, time, Math.max(1, deadline - time.milliseconds()))) {
                throw new TimeoutException("no connection to broker " + leader.node.id() + " within " + timeout.toMillis() + " ms");
            }
            ClientRequest req = client.newClientRequest(String.valueOf(leader.node.id()), request, time.milliseconds(), true);
            ClientResponse resp = NetworkClientUtils.sendAndReceive(client, req, time);
            FetchResponse response = (FetchResponse) resp.responseBody();
            if (response.error() != Errors.NONE) {
                throw new KafkaException("fetch from broker " + leader.node.id() + " failed with " + response.error().name());
            }
            FetchResponseData.PartitionData pd = response.responseData(Map.of(leader.topicId, tp.topic()),
                resp.requestHeader().apiVersion()).get(tp);
            if (pd == null) {
                throw new KafkaException("broker " + leader.node.id() + " returned no data for " + tp);
            }
            return pd;
        } catch (IOException e) {
            throw new KafkaException("reading " + tp + " from broker " + leader.node.id() + " failed: " + e.getMessage(), e);
        }
    }

    private <T> T await(org.apache.kafka.common.KafkaFuture<T> future, long deadline) {
        try {
            return future.get(Math.max(1, deadline - time.milliseconds()), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KafkaException("interrupted", e);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new KafkaException(e.getCause().getMessage(), e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new TimeoutException("the cluster did not answer within " + timeout.toMillis() + " ms");
        }
    }

    @Override
    public void close() {
        clients.values().forEach(c -> Utils.closeQuietly(c, "log reader network client"));
        admin.close(Duration.ofSeconds(5));
        Utils.closeQuietly(metrics, "log reader metrics");
    }
}
