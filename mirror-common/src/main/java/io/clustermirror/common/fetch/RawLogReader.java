package io.clustermirror.common.fetch;

import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.batch.StoredBatches;
import io.clustermirror.common.compat.BrokerFetchClient;
import io.clustermirror.common.compat.FetchedPartition;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Streams the stored batches of partitions of one cluster as the leader serves them (consumer Fetch, read_uncommitted,
 * up to the high watermark), CRCs, control batches and corrupt bytes included: what a byte-level comparison of two logs
 * needs. Memory is bounded: a {@link BatchStream} holds one fetch response ({@link #FETCH_MAX_BYTES}, or one larger
 * batch, which Kafka returns whole). A leader change is followed within the request timeout. Not thread-safe; close it
 * after use.
 */
public final class RawLogReader implements AutoCloseable {
    /** Bytes asked for per fetch: large enough that a fetch round trip costs little against reading the bytes. */
    static final int FETCH_MAX_BYTES = 4 * 1024 * 1024;
    /** The largest response read: {@link #FETCH_MAX_BYTES} or one batch up to a broker's 64 MiB message.max.bytes. */
    private static final int MAX_RESPONSE_BYTES = FETCH_MAX_BYTES + 64 * 1024 * 1024;
    private static final long RETRY_BACKOFF_MS = 100;

    private final Admin admin;
    private final Properties clientProperties;
    private final String clientId;
    private final Duration requestTimeout;
    private final Time time = Time.SYSTEM;
    private final Metrics metrics = new Metrics();
    private final String logPrefix;
    private final Map<Integer, BrokerFetchClient> clients = new HashMap<>();

    /**
     * @param admin            an admin client of the same cluster, for leaders and offsets; the caller closes it
     * @param clientProperties the cluster's client configs (bootstrap servers, security); may hold secrets, never logged
     * @param requestTimeout   how long one read may go without progress, metadata and connection included
     */
    public RawLogReader(Admin admin, Properties clientProperties, String clientId, Duration requestTimeout) {
        this.admin = admin;
        this.clientProperties = clientProperties;
        this.clientId = clientId;
        this.requestTimeout = requestTimeout;
        this.logPrefix = "[RawLogReader " + clientId + "] ";
    }

    /** The partition's log start offset and high watermark now. */
    public LogRange range(TopicPartition tp) {
        long deadline = deadline();
        return new LogRange(listOffset(tp, OffsetSpec.earliest(), deadline), listOffset(tp, OffsetSpec.latest(), deadline));
    }

    /**
     * The batches holding offsets in {@code [from, to)}, in offset order, fetched as they are consumed. Fewer when the
     * log ends earlier (the stream stops at the high watermark). The first batch may start before {@code from} (a batch
     * is read whole) and the last may end at or after {@code to}.
     *
     * @throws KafkaException from the stream's methods when the cluster cannot be read within the request timeout, or
     *                        when the log start passes the stream's position while it reads (retention)
     */
    public BatchStream stream(TopicPartition tp, long from, long to) {
        return new BatchStream(tp, from, to, FETCH_MAX_BYTES, null);
    }

    /**
     * As {@link #stream(TopicPartition, long, long)}, asking for at most {@code fetchMaxBytes} per fetch: 1 reads one
     * batch per fetch (Kafka returns the first batch whole whatever the limit), for a look at the head of a range.
     */
    public BatchStream stream(TopicPartition tp, long from, long to, int fetchMaxBytes) {
        return new BatchStream(tp, from, to, fetchMaxBytes, null);
    }

    /**
     * As {@link #stream(TopicPartition, long, long)}, of the topic with id {@code topicId} only.
     *
     * @throws ClusterMirrorException {@link MirrorError#SOURCE_TOPIC_ID_CHANGED} from the stream's methods when the topic
     *                                of that name has another id (deleted and re-created): its batches say nothing about
     *                                the one asked for
     */
    public BatchStream stream(TopicPartition tp, Uuid topicId, long from, long to) {
        return new BatchStream(tp, from, to, FETCH_MAX_BYTES, topicId);
    }

    /** A log's bounds: the first offset it holds and its high watermark. */
    public record LogRange(long logStartOffset, long highWatermark) {
    }

    /** A lazily fetched sequence of a partition's batches; see {@link #stream}. */
    public final class BatchStream implements Iterator<StoredBatch> {
        private final TopicPartition tp;
        private final long from;
        private final long to;
        private final int fetchMaxBytes;
        private final Uuid expectedTopicId; // null: any
        private final ArrayDeque<StoredBatch> fetched = new ArrayDeque<>();
        private Leader leader;
        private long position;
        private boolean ended;

        private BatchStream(TopicPartition tp, long from, long to, int fetchMaxBytes, Uuid expectedTopicId) {
            this.tp = tp;
            this.from = from;
            this.to = to;
            this.fetchMaxBytes = fetchMaxBytes;
            this.expectedTopicId = expectedTopicId;
            this.position = from;
        }

        @Override
        public boolean hasNext() {
            while (fetched.isEmpty() && !ended) {
                fetchNext();
            }
            return !fetched.isEmpty();
        }

        /** The broker the stream last fetched from (the partition's leader then), or -1 before its first fetch. */
        public int leaderId() {
            return leader == null ? -1 : leader.node().id();
        }

        @Override
        public StoredBatch next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            return fetched.poll();
        }

        private void fetchNext() {
            if (position >= to) {
                ended = true;
                return;
            }
            long deadline = deadline();
            FetchedPartition data = null;
            while (data == null) {
                if (leader == null) {
                    leader = leader(tp, deadline);
                    if (expectedTopicId != null && !expectedTopicId.equals(leader.topicId())) {
                        throw new ClusterMirrorException(MirrorError.SOURCE_TOPIC_ID_CHANGED, "source topic " + tp.topic()
                            + " was deleted and re-created (id " + leader.topicId() + ", mirrored " + expectedTopicId + "): its batches "
                            + "are not compared with the mirrored ones");
                    }
                }
                FetchedPartition pd = fetch(tp, leader, position, fetchMaxBytes, deadline);
                Errors error = pd.error();
                if (error == Errors.NONE) {
                    data = pd;
                } else if (error == Errors.OFFSET_OUT_OF_RANGE && position > from) {
                    throw new KafkaException(tp + ": the log start passed offset " + position + " while it was read (retention"
                        + " or deleted records)");
                } else if (error == Errors.OFFSET_OUT_OF_RANGE) {
                    ended = true; // at or above the end, or below the start: nothing to show from here
                    return;
                } else if (error.exception() instanceof RetriableException && time.milliseconds() < deadline) {
                    leader = null; // a leader change: look it up again
                    time.sleep(RETRY_BACKOFF_MS);
                } else {
                    throw new KafkaException("reading " + tp + " at offset " + position + " from broker " + leader.node().id()
                        + " failed with " + error.name());
                }
            }
            // A trailing partial batch (cut at the fetch size) is left out: it is fetched again next.
            for (StoredBatch batch : StoredBatches.of(data.records().asReadOnlyBuffer())) {
                if (batch.baseOffset() >= to) {
                    ended = true;
                    break;
                }
                fetched.add(batch);
                position = batch.nextOffset();
            }
            if (fetched.isEmpty() && !ended) {
                ended = true; // at the high watermark
            }
        }
    }

    private record Leader(Node node, Uuid topicId) {
    }

    private long deadline() {
        return time.milliseconds() + requestTimeout.toMillis();
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
        return new Leader(node, d.topicId());
    }

    private long listOffset(TopicPartition tp, OffsetSpec spec, long deadline) {
        return await(admin.listOffsets(Map.of(tp, spec)).partitionResult(tp), deadline).offset();
    }

    private FetchedPartition fetch(TopicPartition tp, Leader leader, long offset, int maxBytes, long deadline) {
        // One client per leader, all in this reader's registry: the broker's id tells their metrics apart, else the second
        // leader's client could not register its own.
        BrokerFetchClient client = clients.computeIfAbsent(leader.node().id(), id -> BrokerFetchClient.to(leader.node(),
            clientProperties, clientId, (int) requestTimeout.toMillis(), MAX_RESPONSE_BYTES, metrics,
            "cluster-mirror-raw-log-reader", Map.of("client-id", clientId, "broker-id", String.valueOf(id)), logPrefix));
        return client.fetch(tp, leader.topicId(), offset, maxBytes, Math.max(1, deadline - time.milliseconds()));
    }

    private <T> T await(KafkaFuture<T> future, long deadline) {
        try {
            return future.get(Math.max(1, deadline - time.milliseconds()), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KafkaException("interrupted", e);
        } catch (ExecutionException e) {
            throw new KafkaException(e.getCause().getMessage(), e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new TimeoutException("the cluster did not answer within " + requestTimeout.toMillis() + " ms");
        }
    }

    @Override
    public void close() {
        clients.values().forEach(c -> Utils.closeQuietly(c, "raw log reader network client"));
        Utils.closeQuietly(metrics, "raw log reader metrics");
    }
}
