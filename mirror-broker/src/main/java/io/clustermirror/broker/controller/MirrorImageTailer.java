package io.clustermirror.broker.controller;

import io.clustermirror.broker.LocalClients;
import io.clustermirror.broker.ThreadHealth;
import io.clustermirror.broker.auth.InternalOperations;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.image.MirrorDelta;
import io.clustermirror.common.image.MirrorImage;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.clients.admin.Admin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Tails {@code __mirror_metadata} and {@code __mirror_state} (read_committed, from the beginning) into an
 * immutable {@link MirrorImage}, and hands each new image to a listener. One per broker, on its own thread.
 *
 * <p>Invariant: {@link #image()} only moves forward through the two logs; a listener sees every image in
 * order, on the tailer thread, and must not block. A future from {@link #catchUp()} completes only after the listener
 * was handed an image that holds everything committed to both topics when it was asked for (a read barrier). The
 * thread survives failures: it retries from where it stopped with backoff, reporting them in the log and the
 * {@code thread-healthy} metric ({@link ThreadHealth}).
 *
 * <p>The two topics are watched for a loss of state ({@link InternalStateFence}): every
 * {@value #INCARNATION_CHECK_MS} ms their topic ids are compared with those being read. When they are deleted, or
 * re-created (new ids, which a consumer would otherwise follow silently by resetting its positions), the image starts
 * again from the new topics with every read-only mirror topic fenced. Configs that can lose state are logged at ERROR.
 */
public final class MirrorImageTailer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MirrorImageTailer.class);
    private static final Duration POLL = Duration.ofMillis(200);
    static final long INCARNATION_CHECK_MS = 5_000;
    private static final List<String> TOPICS = List.of(InternalTopics.METADATA, InternalTopics.STATE);

    private final KafkaConsumer<byte[], byte[]> consumer;
    /** Describes the internal topics (ids, configs) as an internal operation of the extension. */
    private final String adminClientId;
    private final Admin admin;
    private final InternalStateFence fence;
    /** Topic ids of the internal topics being read, by name (tailer thread only). */
    private Map<String, String> incarnation = Map.of();
    private long nextIncarnationCheckMs;
    /** Whether the image holds everything committed to {@link #incarnation} when the tailer started reading it. */
    private boolean incarnationLoaded;
    private List<InternalTopics.Misconfiguration> misconfigurations = List.of();
    private final Consumer<MirrorImage> listener;
    private final ThreadHealth health;
    private final Thread thread;
    private volatile MirrorImage image = MirrorImage.EMPTY;
    /** The last image the listener took without failing (tailer thread only). */
    private MirrorImage handedOut = MirrorImage.EMPTY;
    /** True once the image holds everything committed when the tailer started (or no mirror topic existed then). */
    private volatile boolean ready;
    /** Completes when {@link #ready} turns true (it never turns false). */
    private final java.util.concurrent.CompletableFuture<Void> loaded = new java.util.concurrent.CompletableFuture<>();
    private Map<TopicPartition, Long> initialEnds = Map.of();
    private volatile boolean running = true;
    private final Object closeSignal = new Object();
    /** Read barriers asked for and not yet given their target offsets (tailer thread takes them). */
    private final java.util.Queue<java.util.concurrent.CompletableFuture<Void>> barrierRequests =
        new java.util.concurrent.ConcurrentLinkedQueue<>();
    /** Read barriers with their target offsets, in request order (tailer thread only). */
    private final java.util.Deque<ReadBarrier> barriers = new java.util.ArrayDeque<>();

    private record ReadBarrier(java.util.concurrent.CompletableFuture<Void> done, Map<TopicPartition, Long> ends) {
    }

    /**
     * @param nodeDir a directory that lives as long as the node (its metadata log directory), where it keeps its record of
     *                the mirror state it loaded ({@link InternalStateFence}); null to keep it in memory only
     * @param metrics the broker's metrics registry, for the thread's health ({@link ThreadHealth})
     */
    public MirrorImageTailer(LocalClients clients, int nodeId, java.nio.file.Path nodeDir, Metrics metrics,
                             Consumer<MirrorImage> listener) {
        this.consumer = clients.consumer("image-tailer", true);
        this.adminClientId = InternalOperations.newClientId("cluster-mirror-" + nodeId + "-image-tailer");
        this.admin = clients.admin(adminClientId);
        this.fence = new InternalStateFence(nodeDir == null ? null : nodeDir.resolve(InternalStateFence.FILE_NAME));
        this.listener = listener;
        this.health = new ThreadHealth(metrics, log, "image-tailer-" + nodeId);
        this.thread = new Thread(this::run, "cluster-mirror-image-tailer-" + nodeId);
        this.thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    public MirrorImage image() {
        return image;
    }

    /** How many topics are fenced because the mirror state that named them was lost. */
    public int fencedTopicCount() {
        return image.fencedTopics().size();
    }

    /**
     * A read barrier: completes (on the tailer thread) once the image holds everything committed to
     * {@code __mirror_metadata} and {@code __mirror_state} at the time of the call. Decisions that rest on the recorded
     * state of a partition (a new leadership) wait for it: an image that lags must never pass for the truth. It does not
     * complete while those topics cannot be read (fail closed), and completes exceptionally when the tailer closes.
     */
    public java.util.concurrent.CompletableFuture<Void> catchUp() {
        java.util.concurrent.CompletableFuture<Void> done = new java.util.concurrent.CompletableFuture<>();
        barrierRequests.add(done);
        if (!running) {
            done.completeExceptionally(new IllegalStateException("the mirror image tailer is closed"));
        }
        return done;
    }

    /** Gives new read barriers their targets (the current committed ends) and completes those the image has reached. */
    private void serveReadBarriers() {
        if (!barrierRequests.isEmpty()) {
            List<java.util.concurrent.CompletableFuture<Void>> asked = takeBarrierRequests();
            try {
                Map<TopicPartition, Long> ends = consumer.endOffsets(consumer.assignment(), Duration.ofSeconds(5));
                asked.forEach(f -> barriers.add(new ReadBarrier(f, ends)));
            } catch (WakeupException e) {
                throw e;
            } catch (org.apache.kafka.common.KafkaException e) {
                barrierRequests.addAll(asked); // cannot tell what is committed yet: ask again on the next round
                log.warn("Cannot read the end offsets of the mirror's internal topics yet ({}); decisions that need "
                    + "the recorded state wait", e.getMessage());
            }
        }
        while (!barriers.isEmpty() && caughtUpTo(barriers.peek().ends())) {
            barriers.poll().done().complete(null);
        }
    }

    private List<java.util.concurrent.CompletableFuture<Void>> takeBarrierRequests() {
        List<java.util.concurrent.CompletableFuture<Void>> asked = new ArrayList<>();
        for (java.util.concurrent.CompletableFuture<Void> f; (f = barrierRequests.poll()) != null; ) {
            asked.add(f);
        }
        return asked;
    }

    private boolean caughtUpTo(Map<TopicPartition, Long> ends) {
        return ends.entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue());
    }

    private void run() {
        try {
            while (running) {
                try {
                    if (consumer.assignment().isEmpty()) {
                        assignWhenTopicsExist();
                    }
                    tail();
                } catch (WakeupException e) {
                    // closing
                } catch (RuntimeException e) {
                    if (running) {
                        // The image stays as it was (it never moves backwards) and read barriers wait: nothing decides on
                        // a stale image meanwhile.
                        waitForRetry(health.failed("tailing " + InternalTopics.METADATA + " and " + InternalTopics.STATE
                            + " from where it stopped (until then this broker's mirror state is not updated)", e));
                    }
                }
            }
        } finally {
            consumer.close(Duration.ZERO);
            IllegalStateException closed = new IllegalStateException("the mirror image tailer is closed");
            barrierRequests.forEach(f -> f.completeExceptionally(closed));
            barriers.forEach(b -> b.done().completeExceptionally(closed));
        }
    }

    /** Polls and replays until closed; throws what it cannot handle (the caller retries with backoff). */
    private void tail() {
        while (running) {
            if (System.currentTimeMillis() >= nextIncarnationCheckMs && !sameIncarnation()) {
                assignWhenTopicsExist();
                continue;
            }
            ConsumerRecords<byte[], byte[]> records = consumer.poll(POLL);
            if (records.isEmpty()) {
                if (!incarnationLoaded && caughtUpTo(initialEnds)) {
                    publishLoaded(image); // the last records before the ends were transaction markers
                }
            } else {
                MirrorDelta delta = new MirrorDelta(image);
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    try {
                        if (r.topic().equals(InternalTopics.METADATA)) {
                            delta.replayMetadata(r.key(), r.value());
                        } else {
                            delta.replayState(r.key(), r.value());
                        }
                    } catch (RuntimeException e) {
                        // A record we cannot read (e.g. written by a newer version) must not stop the broker's view.
                        log.error("Skipping unreadable record at {}-{} offset {}: {}", r.topic(), r.partition(), r.offset(), e.toString());
                    }
                }
                if (caughtUpTo(initialEnds)) {
                    publishLoaded(delta.apply());
                } else {
                    publish(fence.publish(delta.apply(), false));
                }
            }
            handOut();
            markReadyIfCaughtUp();
            serveReadBarriers();
            health.working();
        }
    }

    public boolean isReady() {
        return ready;
    }

    /** Completes once the image is loaded ({@link #isReady()}); never completes if the tailer closes before. */
    public java.util.concurrent.CompletableFuture<Void> loaded() {
        return loaded.copy();
    }

    private void publish(MirrorImage next) {
        image = next;
        handOut();
    }

    /** Hands the listener the current image unless it took it already; also after a failure, before the read barriers. */
    private void handOut() {
        if (image != handedOut) {
            listener.accept(image);
            handedOut = image;
        }
    }

    /** Publishes an image that holds everything committed when the internal topics started being read. */
    private void publishLoaded(MirrorImage next) {
        incarnationLoaded = true;
        publish(fence.publish(next, true));
    }

    private void markReadyIfCaughtUp() {
        if (!ready && caughtUpTo(initialEnds)) {
            ready = true;
            loaded.complete(null);
            log.info("Mirror image loaded: {} mirrors, {} mirror topics", image.mirrors().size(), image.topics().size());
        }
    }

    /**
     * Waits (polling metadata, bounded by close) until the internal topics exist, then assigns all their partitions and
     * starts the image again from their beginning (with the fenced topics). When they do not exist at the first look, no
     * mirror topic exists either (or this broker fences those it knew): the image is ready at once.
     */
    private void assignWhenTopicsExist() {
        boolean firstLook = true;
        while (running) {
            // Barriers asked for before a look that finds no internal topic: nothing was committed when they were asked.
            List<java.util.concurrent.CompletableFuture<Void>> askedBefore = takeBarrierRequests();
            List<TopicPartition> partitions = new ArrayList<>();
            for (String topic : List.of(InternalTopics.METADATA, InternalTopics.STATE)) {
                List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(5));
                if (infos == null || infos.isEmpty()) {
                    partitions.clear();
                    break;
                }
                infos.forEach(i -> partitions.add(new TopicPartition(i.topic(), i.partition())));
            }
            Map<String, String> ids;
            try {
                ids = partitions.isEmpty() ? Map.of() : topicIds();
            } catch (org.apache.kafka.common.KafkaException e) {
                log.warn("Cannot describe the mirror's internal topics yet ({}); retrying", e.toString());
                barrierRequests.addAll(askedBefore);
                backOff();
                continue;
            }
            if (!ids.isEmpty()) {
                barrierRequests.addAll(askedBefore); // served once assigned
                // Before assigning: an assignment (which a retry after a failure keeps) always comes with its initial ends.
                initialEnds = consumer.endOffsets(partitions);
                boolean recordsDeleted = consumer.beginningOffsets(partitions).values().stream().anyMatch(o -> o > 0);
                consumer.assign(partitions);
                consumer.seekToBeginning(partitions);
                incarnation = ids;
                incarnationLoaded = false;
                publish(fence.startIncarnation(ids, recordsDeleted));
                checkConfigs();
                nextIncarnationCheckMs = System.currentTimeMillis() + INCARNATION_CHECK_MS;
                return;
            }
            fence.topicsDeleted();
            incarnation = Map.of();
            MirrorImage empty = MirrorImage.EMPTY.withFencedTopics(fence.fenced());
            if (!image.topics().isEmpty() || !image.fencedTopics().equals(empty.fencedTopics())) {
                publish(empty); // what the lost topics said no longer holds; the fence keeps their mirror topics read-only
            }
            if (firstLook) {
                ready = true;
                loaded.complete(null);
                firstLook = false;
                log.info("Mirror image loaded: no mirror state exists yet ({} and {} are not created)", InternalTopics.METADATA,
                    InternalTopics.STATE);
            }
            askedBefore.forEach(f -> f.complete(null));
            backOff();
        }
    }

    /** Waits a second before looking at the internal topics again; close() ends it. */
    private void backOff() {
        waitForRetry(1_000);
    }

    private void waitForRetry(long backoffMs) {
        synchronized (closeSignal) {
            if (running) {
                try {
                    closeSignal.wait(backoffMs);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    running = false;
                }
            }
        }
    }

    /**
     * True while the topics being read are still those of {@link #incarnation} (or cannot be described now: checked again
     * later). Logs configs that can lose state when they change.
     */
    private boolean sameIncarnation() {
        nextIncarnationCheckMs = System.currentTimeMillis() + INCARNATION_CHECK_MS;
        Map<String, String> ids;
        try {
            ids = topicIds();
        } catch (org.apache.kafka.common.KafkaException e) {
            log.debug("Cannot describe the mirror's internal topics now ({}); checked again in {} ms", e.toString(), INCARNATION_CHECK_MS);
            return true;
        }
        if (!ids.equals(incarnation)) {
            log.warn("The mirror's internal topics changed under this broker's image (topic ids {} being read, {} now)", incarnation, ids);
            return false;
        }
        checkConfigs();
        return true;
    }

    /** Topic ids of the internal topics by name; empty unless both exist. */
    private Map<String, String> topicIds() {
        try (InternalOperations.Scope ignored = InternalOperations.begin(adminClientId,
                TOPICS.stream().map(t -> InternalOperations.Operation.topic(t, AclOperation.DESCRIBE)).toList())) {
            Map<String, String> ids = new java.util.TreeMap<>();
            admin.describeTopics(TOPICS).topicNameValues().forEach((name, f) -> {
                try {
                    ids.put(name, f.get(10, TimeUnit.SECONDS).topicId().toString());
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                        throw new org.apache.kafka.common.KafkaException("cannot describe " + name, e.getCause());
                    }
                } catch (InterruptedException | java.util.concurrent.TimeoutException e) {
                    throw new org.apache.kafka.common.KafkaException("cannot describe " + name, e);
                }
            });
            return ids.size() == TOPICS.size() ? Map.copyOf(ids) : Map.of();
        }
    }

    /** Logs, when they change, the configs of the internal topics that can lose mirror state. */
    private void checkConfigs() {
        try (InternalOperations.Scope ignored = InternalOperations.begin(adminClientId,
                TOPICS.stream().map(t -> InternalOperations.Operation.topic(t, AclOperation.DESCRIBE_CONFIGS)).toList())) {
            List<InternalTopics.Misconfiguration> found = InternalTopicsInitializer.misconfigurations(admin, TOPICS);
            if (!found.equals(misconfigurations)) {
                found.forEach(InternalTopicsInitializer::logMisconfiguration);
                if (found.isEmpty()) {
                    log.info("The configs of the mirror's internal topics are safe again");
                }
            }
            misconfigurations = found;
        } catch (ExecutionException | java.util.concurrent.TimeoutException | org.apache.kafka.common.KafkaException e) {
            log.debug("Cannot check the configs of the mirror's internal topics now: {}", e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        running = false;
        synchronized (closeSignal) {
            closeSignal.notifyAll();
        }
        consumer.wakeup();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        admin.close(Duration.ZERO);
        health.close();
    }
}
