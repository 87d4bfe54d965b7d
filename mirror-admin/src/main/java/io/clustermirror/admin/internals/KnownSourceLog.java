package io.clustermirror.admin.internals;

import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.compat.SourceTransaction;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.common.records.SourceLogReadRecord;
import io.clustermirror.common.records.SourceOffsetCommitRecord;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * What a mirror's sync kept of the source's coordinator logs in {@code __mirror_transactions}: the transactions over
 * several of its partitions (or over one and a group's offsets), the offsets groups committed inside transactions, and
 * up to when it had read both logs.
 *
 * @param transactions the transactions the source prepared
 * @param commits      the transactional offset commits of the synced groups
 * @param readUpToMs   every transaction and commit of the source before this time is among them; -1 when the sync has
 *                     never read both logs to their end
 */
public record KnownSourceLog(List<SourceTransaction> transactions, List<SourceOffsetCommitRecord> commits, long readUpToMs) {
    public static final KnownSourceLog NONE = new KnownSourceLog(List.of(), List.of(), -1);

    public KnownSourceLog {
        transactions = List.copyOf(transactions);
        commits = List.copyOf(commits);
    }

    /**
     * Reads what the sync kept for {@code mirror}: the records of the {@code windowMs} before the last one, up to
     * {@code end} (the topic's end offset, read before), with {@code consumer} (assigned here; the caller closes it).
     *
     * @param remainingMs how long the read may still take
     */
    public static KnownSourceLog read(Consumer<byte[], byte[]> consumer, String mirror, long end, long windowMs, LongSupplier remainingMs) {
        TopicPartition log = new TopicPartition(InternalTopics.TRANSACTIONS, 0);
        if (end <= 0) {
            return NONE;
        }
        consumer.assign(List.of(log));
        consumer.seek(log, end - 1);
        long lastMs = -1;
        while (lastMs < 0 && remainingMs.getAsLong() > 0) {
            lastMs = consumer.poll(Duration.ofMillis(Math.min(500, remainingMs.getAsLong()))).records(log).stream()
                .mapToLong(ConsumerRecord::timestamp).max().orElse(-1);
        }
        OffsetAndTimestamp from = consumer.offsetsForTimes(Map.of(log, Math.max(0, lastMs - windowMs)),
            Duration.ofMillis(Math.max(1, remainingMs.getAsLong()))).get(log);
        consumer.seek(log, from == null ? end : from.offset());
        byte[] key = mirror.getBytes(StandardCharsets.UTF_8);
        List<SourceTransaction> transactions = new ArrayList<>();
        List<SourceOffsetCommitRecord> commits = new ArrayList<>();
        long readUpToMs = -1;
        while (remainingMs.getAsLong() > 0 && consumer.position(log, Duration.ofMillis(remainingMs.getAsLong())) < end) {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(Math.min(500, remainingMs.getAsLong())))) {
                if (r.offset() >= end || !Arrays.equals(key, r.key())) {
                    continue;
                }
                Header kind = r.headers().lastHeader(SourceOffsetCommitRecord.KIND_HEADER);
                String k = kind == null ? "" : new String(kind.value(), StandardCharsets.UTF_8);
                if (kind == null) {
                    transactions.add(RecordCodec.decodeTransaction(r.value()).transaction());
                } else if (k.equals(SourceOffsetCommitRecord.KIND)) {
                    commits.add(RecordCodec.decodeOffsetCommit(r.value()));
                } else if (k.equals(SourceLogReadRecord.KIND)) {
                    readUpToMs = Math.max(readUpToMs, RecordCodec.decodeSourceLogRead(r.value()).readUpToMs());
                }
            }
        }
        return new KnownSourceLog(transactions, commits, readUpToMs);
    }
}
