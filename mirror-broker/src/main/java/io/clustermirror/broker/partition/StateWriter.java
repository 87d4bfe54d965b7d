package io.clustermirror.broker.partition;

import io.clustermirror.broker.node.LocalClients;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.RecordCodec;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Writes partition states to {@code __mirror_state} with an idempotent producer, each under its log key
 * ({@link PartitionStateRecord#logKey()}: the partition and the writer's destination leader epoch), so that neither
 * readers nor compaction let a stale leader's late write replace a newer leader's state (see
 * {@link io.clustermirror.common.image.MirrorDelta}).
 *
 * <p>Invariant: the latest record written for a partition eventually lands, unless the writer closes first, and the
 * records of one partition land in the order they were written. A write can fail while {@code __mirror_state} is
 * unavailable: when its batch expires ({@code delivery.timeout.ms}) the idempotent producer bumps its epoch and fails
 * the batches of that partition still in flight with {@code OutOfOrderSequenceException}. A failed record is sent
 * again, after a backoff, as long as no newer record of its partition was written since (a lost state record would
 * lose the partition's lineage); an older record is never sent after a newer one of its partition. Together with one
 * leader per leader epoch, this makes the last record of a log key its leader's latest state.
 *
 * <p>{@link #write} returns a future that completes once the record, or a later record of its partition (which carries
 * everything it did: each record is the partition's whole state), has landed; a caller that must not go on before its
 * state is durable (a stop recording its cut before truncating) waits on it.
 *
 * <p>Once a record landed, the log keys it supersedes (the partition's records of lower epochs, as the caller's image
 * shows them) are tombstoned, best effort: a key left behind still loses to the newer epoch, and the next write
 * tombstones it again.
 */
final class StateWriter implements PartitionRuntime.StateRecords {
    private static final Logger log = LoggerFactory.getLogger(StateWriter.class);
    private static final long RETRY_BACKOFF_MS = 1_000;

    private final Producer<byte[], byte[]> producer;
    private final long retryBackoffMs;
    private final ScheduledExecutorService retries;
    /**
     * The latest record per partition ({@link PartitionStateRecord#key()}), until it landed. Writes and re-sends check and send under the writer's lock (so the
     * sends of one key keep their order); the producer's callbacks never take it.
     */
    private final Map<String, PartitionStateRecord> unconfirmed = new ConcurrentHashMap<>();
    /** The futures of the records written per partition, in write order, until a record at or after theirs landed. */
    private final Map<String, java.util.ArrayDeque<Landing>> landings = new ConcurrentHashMap<>();
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

    /**
     * Writes the record of a partition this broker leads at {@code record.leaderEpoch()}.
     *
     * @param superseded log keys of the partition's older records ({@code MirrorImage.stateLogKeysSupersededBy}), tombstoned
     *                   once the record landed
     */
    @Override
    public synchronized CompletableFuture<Void> write(PartitionStateRecord record, List<String> superseded) {
        if (closed) {
            return CompletableFuture.failedFuture(new IllegalStateException("the state writer is closed"));
        }
        Landing landing = new Landing(record, new CompletableFuture<>());
        landings.compute(record.key(), (key, queue) -> {
            java.util.ArrayDeque<Landing> q = queue == null ? new java.util.ArrayDeque<>() : queue;
            q.add(landing);
            return q;
        });
        unconfirmed.put(record.key(), record);
        send(record, superseded, 1);
        return landing.landed();
    }

    /** A written record and the future that completes once it, or a later record of its partition, landed. */
    private record Landing(PartitionStateRecord record, CompletableFuture<Void> landed) {
    }

    /** Completes the futures of {@code record} and of every record of its partition written before it. */
    private void landed(PartitionStateRecord record) {
        List<Landing> done = new java.util.ArrayList<>();
        landings.computeIfPresent(record.key(), (key, queue) -> {
            if (queue.stream().noneMatch(l -> l.record() == record)) {
                return queue; // completed already by a later record's landing
            }
            Landing l;
            do {
                l = queue.poll();
                done.add(l);
            } while (l.record() != record);
            return queue.isEmpty() ? null : queue;
        });
        done.forEach(l -> l.landed().complete(null));
    }

    /** Sends the record if it is still the latest of its partition; must hold the lock (orders the sends of one partition). */
    private void send(PartitionStateRecord record, List<String> superseded, int attempt) {
        try {
            producer.send(new ProducerRecord<>(InternalTopics.STATE, RecordCodec.encodeKey(record.logKey()), RecordCodec.encodeState(record)),
                (metadata, error) -> {
                    if (error == null) {
                        unconfirmed.remove(record.key(), record);
                        landed(record);
                        if (!superseded.isEmpty()) {
                            runLater(() -> tombstone(superseded), 0); // not on the producer's I/O thread
                        }
                    } else {
                        retryLater(record, superseded, attempt, error);
                    }
                });
        } catch (RuntimeException e) {
            retryLater(record, superseded, attempt, e);
        }
    }

    private synchronized void tombstone(List<String> logKeys) {
        if (closed) {
            return;
        }
        for (String logKey : logKeys) {
            try {
                producer.send(new ProducerRecord<>(InternalTopics.STATE, RecordCodec.encodeKey(logKey), null), (metadata, error) -> {
                    if (error != null) {
                        log.debug("Could not tombstone the superseded state record {}; the next write retries: {}", logKey, error.toString());
                    }
                });
            } catch (RuntimeException e) {
                log.debug("Could not tombstone the superseded state record {}; the next write retries: {}", logKey, e.toString());
            }
        }
    }

    private void retryLater(PartitionStateRecord record, List<String> superseded, int attempt, Exception error) {
        log.warn("Could not record state {} of mirror partition {} (attempt {}): {}; retrying in {} ms unless a newer state is "
            + "recorded first", record.state(), record.key(), attempt, error.toString(), retryBackoffMs);
        runLater(() -> resend(record, superseded, attempt + 1), retryBackoffMs);
    }

    private void runLater(Runnable task, long delayMs) {
        try {
            retries.schedule(task, delayMs, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException closing) {
            // closed: nothing is sent any more
        }
    }

    private synchronized void resend(PartitionStateRecord record, List<String> superseded, int attempt) {
        if (!closed && unconfirmed.get(record.key()) == record) {
            send(record, superseded, attempt);
        }
    }

    /** Idempotent: a second close does nothing. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        retries.shutdownNow();
        producer.close(Duration.ofSeconds(5));
        landings.values().forEach(queue -> queue.forEach(l -> l.landed().completeExceptionally(
            new IllegalStateException("the state writer closed before the record of " + l.record().key() + " landed"))));
        landings.clear();
    }
}
