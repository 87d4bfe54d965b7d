package io.clustermirror.broker.partition;

import io.clustermirror.broker.LocalClients;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.RecordCodec;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Writes partition states to {@code __mirror_state} with an idempotent producer. Records carry the writer's
 * destination leader epoch, so readers ignore a stale leader's late writes.
 *
 * <p>Invariant: the latest record written for a key eventually lands, unless the writer closes first. A write can fail
 * while {@code __mirror_state} is unavailable: when its batch expires ({@code delivery.timeout.ms}) the idempotent
 * producer bumps its epoch and fails the batches of that partition still in flight with
 * {@code OutOfOrderSequenceException}. A failed record is sent again, after a backoff, as long as no newer record of
 * its key was written since (a lost state record would lose the partition's lineage); an older record is never sent
 * after a newer one of its key.
 */
final class StateWriter implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StateWriter.class);
    private static final long RETRY_BACKOFF_MS = 1_000;

    private final Producer<byte[], byte[]> producer;
    private final long retryBackoffMs;
    private final ScheduledExecutorService retries;
    /**
     * The latest record per key, until it landed. Writes and re-sends check and send under the writer's lock (so the
     * sends of one key keep their order); the producer's callbacks never take it.
     */
    private final Map<String, PartitionStateRecord> unconfirmed = new ConcurrentHashMap<>();
    private boolean closed;

    StateWriter(LocalClients clients, int nodeId) {
        this(clients.producer("state-writer", null), nodeId, RETRY_BACKOFF_MS);
    }

    StateWriter(Producer<byte[], byte[]> producer, int nodeId, long retryBackoffMs) {
        this.producer = producer;
        this.retryBackoffMs = retryBackoffMs;
        this.retries = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "cluster-mirror-state-writer-" + nodeId);
            t.setDaemon(true);
            return t;
        });
    }

    synchronized void write(PartitionStateRecord record) {
        if (closed) {
            return;
        }
        unconfirmed.put(record.key(), record);
        send(record, 1);
    }

    /** Sends the record if it is still the latest of its key; must hold the lock (orders the sends of one key). */
    private void send(PartitionStateRecord record, int attempt) {
        try {
            producer.send(new ProducerRecord<>(InternalTopics.STATE, RecordCodec.encodeKey(record.key()), RecordCodec.encodeState(record)),
                (metadata, error) -> {
                    if (error == null) {
                        unconfirmed.remove(record.key(), record);
                    } else {
                        retryLater(record, attempt, error);
                    }
                });
        } catch (RuntimeException e) {
            retryLater(record, attempt, e);
        }
    }

    private void retryLater(PartitionStateRecord record, int attempt, Exception error) {
        log.warn("Could not record state {} of mirror partition {} (attempt {}): {}; retrying in {} ms unless a newer state is "
            + "recorded first", record.state(), record.key(), attempt, error.toString(), retryBackoffMs);
        try {
            retries.schedule(() -> resend(record, attempt + 1), retryBackoffMs, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException closing) {
            // closed: nothing is re-sent any more
        }
    }

    private synchronized void resend(PartitionStateRecord record, int attempt) {
        if (!closed && unconfirmed.get(record.key()) == record) {
            send(record, attempt);
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
        }
        retries.shutdownNow();
        producer.close(Duration.ofSeconds(5));
    }
}
