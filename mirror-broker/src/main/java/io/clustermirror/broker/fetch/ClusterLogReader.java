package io.clustermirror.broker.fetch;

import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.ListenerProbe;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.compat.BoundedClients;
import io.clustermirror.common.compat.ResponseBound;
import io.clustermirror.common.fetch.RawLogReader;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Utils;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.function.Function;
import java.util.function.LongFunction;

/**
 * Reads the stored batches of one partition of a Kafka cluster, as they are (consumer Fetch, read_uncommitted, up to
 * the high watermark), CRCs and control batches included, each checked against its CRC: what the alignment's log
 * comparison, the producer-state repair and the lag probes of paused partitions ({@link #head}) need. One-shot reads,
 * never the mirroring data path. A
 * {@link RawLogReader} over an admin client of its own; not thread-safe; close it after use.
 */
public final class ClusterLogReader implements AutoCloseable {
    private final Admin admin;
    private final RawLogReader reader;
    private int lastLeader = -1;

    /**
     * A reader of this broker's own cluster.
     *
     * @param clientProperties the cluster's client configs (bootstrap servers, security); may hold secrets, never logged
     * @param timeout          how long one read may go without progress, metadata and connection included
     */
    public ClusterLogReader(Properties clientProperties, String clientId, Duration timeout) {
        this(clientProperties, clientId, timeout, Admin::create);
    }

    /** A reader of a source cluster, whose admin client reads no response above {@code bound}. */
    public ClusterLogReader(Properties clientProperties, ResponseBound bound, String clientId, Duration timeout) {
        this(clientProperties, clientId, timeout, props -> BoundedClients.admin(props, bound));
    }

    private ClusterLogReader(Properties clientProperties, String clientId, Duration timeout, Function<Properties, Admin> admins) {
        ListenerProbe.check(clientProperties);
        Properties adminProps = new Properties();
        adminProps.putAll(clientProperties);
        adminProps.put(CommonClientConfigs.CLIENT_ID_CONFIG, clientId + "-admin");
        this.admin = admins.apply(adminProps);
        this.reader = new RawLogReader(admin, clientProperties, clientId, timeout);
    }

    /**
     * The batches that hold offsets in {@code [from, to)}, in offset order; fewer when the log starts later or ends
     * earlier (below its log start and at its high watermark the log has nothing to show).
     *
     * @throws KafkaException with the cause when the cluster cannot be read within the timeout, when the log start
     *                        passes the read's position while it reads (read again)
     * @throws ClusterMirrorException {@link MirrorError#CORRUPT_MESSAGE} naming the batch's offsets when a batch fails its CRC
     */
    public List<StoredBatch> batches(TopicPartition tp, long from, long to) {
        return read(tp, from, to, start -> reader.stream(tp, start, to));
    }

    /**
     * {@link #batches(TopicPartition, long, long)} of the topic with id {@code topicId} only.
     *
     * @throws ClusterMirrorException {@link MirrorError#SOURCE_TOPIC_ID_CHANGED} when the topic of that name has another id
     *                                (deleted and re-created): its batches say nothing about the one that was mirrored
     */
    public List<StoredBatch> batches(TopicPartition tp, Uuid topicId, long from, long to) {
        return read(tp, from, to, start -> reader.stream(tp, topicId, start, to));
    }

    private List<StoredBatch> read(TopicPartition tp, long from, long to, LongFunction<RawLogReader.BatchStream> streamFrom) {
        RawLogReader.BatchStream stream = streamFrom.apply(Math.max(from, reader.range(tp).logStartOffset()));
        List<StoredBatch> out = new ArrayList<>();
        try {
            while (stream.hasNext()) {
                StoredBatch batch = checked(tp, stream.next());
                if (batch.lastOffset() >= from && batch.baseOffset() < to) {
                    out.add(batch);
                }
            }
        } finally {
            lastLeader = stream.leaderId();
        }
        return out;
    }

    /**
     * {@code batch} if it passes its CRC check; otherwise the failure names the batch's offsets, as the data path's does
     * for a corrupt fetched batch, so that the operator knows where to look.
     */
    static StoredBatch checked(TopicPartition tp, StoredBatch batch) {
        try {
            batch.ensureValid();
            return batch;
        } catch (KafkaException e) {
            throw new ClusterMirrorException(MirrorError.CORRUPT_MESSAGE, "corrupt batch at offsets " + batch.baseOffset() + ".."
                + batch.lastOffset() + " of " + tp + " as read from the cluster: " + e.getMessage() + ". The read is tried "
                + "again; if this persists, the replica that serves it is damaged at these offsets (compare its segment with "
                + "kafka-dump-log, or move the leadership to a healthy replica)", e);
        }
    }

    /**
     * The partition's high watermark and its first batch at or past {@code offset} (one batch is fetched). Below the log
     * start the first batch is the log start's; at or past the high watermark there is none.
     *
     * @throws KafkaException with the cause when the cluster cannot be read within the timeout
     */
    public Head head(TopicPartition tp, long offset) {
        RawLogReader.LogRange range = reader.range(tp);
        RawLogReader.BatchStream stream = reader.stream(tp, Math.max(offset, range.logStartOffset()), range.highWatermark(), 1);
        try {
            return new Head(range.highWatermark(), stream.hasNext() ? Optional.of(stream.next()) : Optional.empty());
        } finally {
            lastLeader = stream.leaderId();
        }
    }

    /**
     * What {@link #head} saw.
     *
     * @param highWatermark the partition's high watermark
     * @param firstBatch    the first batch at or past the offset asked for, if the log has one below the high watermark
     */
    public record Head(long highWatermark, Optional<StoredBatch> firstBatch) {
    }

    /** The broker the last {@link #batches} call read from (the partition's leader then), or -1. */
    public int lastLeader() {
        return lastLeader;
    }

    @Override
    public void close() {
        Utils.closeQuietly(reader, "log reader");
        admin.close(Duration.ofSeconds(5));
    }
}
