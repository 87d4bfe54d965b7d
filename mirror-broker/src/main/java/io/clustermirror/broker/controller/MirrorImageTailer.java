package io.clustermirror.broker.controller;

import io.clustermirror.broker.node.LocalClients;
import io.clustermirror.broker.node.ThreadHealth;
import io.clustermirror.broker.auth.InternalOperations;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.LogEnds;
import io.clustermirror.common.image.MirrorDelta;
import io.clustermirror.common.image.MirrorImage;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;
import java.util.stream.Collectors;

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
 *
 * <p>The work is done in rounds ({@link #runOnce()}), each of which says how long to wait before the next: the
 * tailer's thread runs them, a unit test runs them itself with Kafka's {@code MockConsumer} and {@code MockTime}.
 */
public final class MirrorImageTailer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MirrorImageTailer.class);
    private static final Duration POLL = Duration.ofMillis(200);
    /**
     * Each poll makes one image, and an image costs a copy of the partition states' maps: Kafka's default of 500 records
     * would make a start of 10,000 partitions (tens of thousands of state records) build a hundred images where the
     * fetched records allow a few. Records are small (a partition's state), so a poll stays a few MB.
     */
    private static final int MAX_POLL_RECORDS = 10_000;
    /** Bound of one blocking consumer call other than a poll (end offsets, positions, partitions). */
    private static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(5);
    static final long INCARNATION_CHECK_MS = 5_000;
    /** How long to wait before looking again for internal topics that do not exist (or cannot be described). */
    static final long TOPICS_LOOK_BACKOFF_MS = 1_000;

    private final org.apache.kafka.clients.consumer.Consumer<byte[], byte[]> consumer;
    private final InternalTopicsView topics;
    private final Time time;
    private final InternalStateFence fence;
    /** Topic ids of the internal topics being read, by name (tailer thread only). */
    private Map<String, String> incarnation = Map.of();
    private long nextIncarnationCheckMs;
    /** True until the internal topics are assigned: at the start, and after they were deleted or re-created. */
    private boolean lookingForTopics = true;
    /** True for the first look after {@link #lookingForTopics} began. */
    private boolean firstLook = true;
    /** Whether the image holds everything committed to {@link #incarnation} when the tailer started reading it. */
    private boolean incarnationLoaded;
    private List<InternalTopics.Misconfiguration> misconfigurations = List.of();
    private final Consumer<MirrorImage> listener;
    /** Runs (on the tailer thread) when {@code __mirror_state} alone was lost and the image went on from what it knew. */
    private volatile Runnable stateLost = () -> { };
    private final ThreadHealth health;
    private final Thread thread;
    private volatile MirrorImage image = MirrorImage.EMPTY;
    /** The last image the listener took without failing (tailer thread only). */
    private MirrorImage handedOut = MirrorImage.EMPTY;
    /** True once the image holds everything committed when the tailer started (or no mirror topic existed then). */
    private volatile boolean ready;
    /** Completes when {@link #ready} turns true (it never turns false). */
    private final CompletableFuture<Void> loaded = new CompletableFuture<>();
    /** The ends of the internal topics when the tailer started reading them. */
    private LogEnds initialEnds = LogEnds.NONE;
    private volatile boolean running = true;
    private final Object closeSignal = new Object();
    /** Read barriers asked for and not yet given their target offsets (tailer thread takes them). */
    private final Queue<CompletableFuture<Void>> barrierRequests = new ConcurrentLinkedQueue<>();
    /** Read barriers with their target offsets, in request order (tailer thread only). */
    private final Deque<ReadBarrier> barriers = new ArrayDeque<>();

    private record ReadBarrier(CompletableFuture<Void> done, LogEnds ends) {
    }

    /**
     * @param nodeDir a directory that lives as long as the node (its metadata log directory), where it keeps its record of
     *                the mirror state it loaded ({@link InternalStateFence}); null to keep it in memory only
     * @param metrics the broker's metrics registry, for the thread's health ({@link ThreadHealth})
     */
    public MirrorImageTailer(LocalClients clients, int nodeId, Path nodeDir, Metrics metrics, Consumer<MirrorImage> listener) {
        this(clients.consumer("image-tailer", true, Map.of(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, MAX_POLL_RECORDS)), adminView(clients,
            nodeId), Time.SYSTEM, nodeId, nodeDir, metrics, listener);
    }

    /**
     * @param consumer a read_committed consumer that assigns partitions itself; the tailer closes it
     * @param topics   the internal topics' ids and configs; the tailer closes it
     * @param time     the clock of the checks of the topics' ids
     */
    MirrorImageTailer(org.apache.kafka.clients.consumer.Consumer<byte[], byte[]> consumer, InternalTopicsView topics, Time time,
                      int nodeId, Path nodeDir, Metrics metrics, Consumer<MirrorImage> listener) {
        this.consumer = consumer;
        this.topics = topics;
        this.time = time;
        this.fence = new InternalStateFence(nodeDir == null ? null : nodeDir.resolve(InternalStateFence.FILE_NAME));
        this.listener = listener;
        this.health = new ThreadHealth(metrics, log, "image-tailer-" + nodeId);
        this.thread = new Thread(this::run, "cluster-mirror-image-tailer-" + nodeId);
        this.thread.setDaemon(true);
    }

    private static InternalTopicsView adminView(LocalClients clients, int nodeId) {
        String adminClientId = InternalOperations.newClientId("cluster-mirror-" + nodeId + "-image-tailer");
        return InternalTopicsView.of(clients.admin(adminClientId), adminClientId);
    }

    public void start() {
        thread.start();
    }

    /**
     * What to do when {@code __mirror_state} alone was lost (deleted, re-created, records deleted) and the image goes on
     * from the state this broker knew: record that state again. Set before {@link #start()}; must not block.
     */
    public void onStateLost(Runnable action) {
        this.stateLost = action;
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
    public CompletableFuture<Void> catchUp() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        barrierRequests.add(done);
        if (!running) {
            done.completeExceptionally(closedException());
        }
        return done;
    }

    public boolean isReady() {
        return ready;
    }

    private void run() {
        try {
            while (running) {
                long waitMs = runOnce();
                if (waitMs > 0) {
                    waitForRetry(waitMs);
                }
            }
        } finally {
            release();
        }
    }

    /**
     * One round of the tailer's thread: looks for the internal topics until they exist, then polls and replays once.
     * Never throws but when closing: a failure is recorded in the thread's health and retried from where it stopped.
     *
     * @return how long to wait before the next round (0: at once)
     */
    long runOnce() {
        try {
            if (lookingForTopics) {
                return lookForTopics() ? 0 : TOPICS_LOOK_BACKOFF_MS;
            }
            tailOnce();
            health.working();
            return 0;
        } catch (WakeupException e) {
            return 0; // closing
        } catch (RuntimeException e) {
            if (!running) {
                return 0;
            }
            // The image stays as it was (it never moves backwards) and read barriers wait: nothing decides on a stale image
            // meanwhile.
            return health.failed("tailing " + InternalTopics.METADATA + " and " + InternalTopics.STATE
                + " from where it stopped (until then this broker's mirror state is not updated)", e);
        }
    }

    /** Polls and replays once; throws what it cannot handle (the caller retries with backoff). */
    private void tailOnce() {
        if (time.milliseconds() >= nextIncarnationCheckMs && !sameIncarnation()) {
            lookingForTopics = true;
            firstLook = true;
            return;
        }
        ConsumerRecords<byte[], byte[]> records = consumer.poll(POLL);
        if (records.isEmpty()) {
            if (!incarnationLoaded && initialEnds.reachedBy(consumer, CLIENT_TIMEOUT)) {
                publishLoaded(image); // the last records before the ends were transaction markers
            }
        } else {
            MirrorDelta delta = new MirrorDelta(image);
            // A record we cannot read (e.g. written by a newer version) must not stop the broker's view.
            records.forEach(delta::replayOrSkip);
            if (initialEnds.reachedBy(consumer, CLIENT_TIMEOUT)) {
                publishLoaded(delta.apply());
            } else {
                publish(fence.publish(delta.apply(), false));
            }
        }
        handOut();
        markReadyIfCaughtUp();
        serveReadBarriers();
    }

    /** Gives new read barriers their targets (the current committed ends) and completes those the image has reached. */
    private void serveReadBarriers() {
        if (!barrierRequests.isEmpty()) {
            List<CompletableFuture<Void>> asked = takeBarrierRequests();
            try {
                LogEnds ends = LogEnds.capture(consumer, consumer.assignment(), CLIENT_TIMEOUT);
                asked.forEach(f -> barriers.add(new ReadBarrier(f, ends)));
            } catch (WakeupException e) {
                throw e;
            } catch (KafkaException e) {
                barrierRequests.addAll(asked); // cannot tell what is committed yet: ask again on the next round
                log.warn("Cannot read the end offsets of the mirror's internal topics yet ({}); decisions that need "
                    + "the recorded state wait", e.getMessage());
            }
        }
        while (!barriers.isEmpty() && barriers.peek().ends().reachedBy(consumer, CLIENT_TIMEOUT)) {
            barriers.poll().done().complete(null);
        }
    }

    private List<CompletableFuture<Void>> takeBarrierRequests() {
        List<CompletableFuture<Void>> asked = new ArrayList<>();
        for (CompletableFuture<Void> f; (f = barrierRequests.poll()) != null; ) {
            asked.add(f);
        }
        return asked;
    }

    /** Completes once the image is loaded ({@link #isReady()}); never completes if the tailer closes before. */
    public CompletableFuture<Void> loaded() {
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
        if (!ready && initialEnds.reachedBy(consumer, CLIENT_TIMEOUT)) {
            ready = true;
            loaded.complete(null);
            log.info("Mirror image loaded: {} mirrors, {} mirror topics", image.mirrors().size(), image.topics().size());
        }
    }

    /** What one look for the internal topics found. */
    private enum Look { ASSIGNED, ABSENT, UNKNOWN }

    /**
     * One look for the internal topics. When both exist, assigns all their partitions and starts the image again from their
     * beginning (with the fenced topics). When they do not exist at the first look, no mirror topic exists either (or this
     * broker fences those it knew): the image is ready at once.
     *
     * @return true once they are assigned; false to look again after a backoff
     */
    private boolean lookForTopics() {
        // Barriers asked for before a look that finds no internal topic: nothing was committed when they were asked.
        List<CompletableFuture<Void>> askedBefore = takeBarrierRequests();
        Look look = Look.UNKNOWN;
        try {
            look = look();
        } finally {
            if (look == Look.ABSENT) {
                askedBefore.forEach(f -> f.complete(null));
            } else {
                barrierRequests.addAll(askedBefore); // served once assigned, or after the next look
            }
        }
        return look == Look.ASSIGNED;
    }

    private Look look() {
        List<TopicPartition> partitions = new ArrayList<>();
        for (String topic : InternalTopicsView.TOPICS) {
            List<PartitionInfo> infos = consumer.partitionsFor(topic, CLIENT_TIMEOUT);
            if (infos != null) {
                infos.forEach(i -> partitions.add(new TopicPartition(i.topic(), i.partition())));
            }
        }
        Map<String, String> ids;
        try {
            ids = partitions.isEmpty() ? Map.of() : topics.topicIds();
            if (ids.containsKey(InternalTopics.METADATA) && !ids.containsKey(InternalTopics.STATE)) {
                // The desired state is intact: the actual state is recorded again in a new topic, created right (a producer
                // that wrote to the missing topic first would create it with the broker's defaults).
                topics.createState();
                return Look.UNKNOWN; // assigned at the next look, with the new topic
            }
        } catch (WakeupException e) {
            throw e;
        } catch (KafkaException e) {
            log.warn("Cannot describe the mirror's internal topics yet ({}); retrying", e.toString());
            return Look.UNKNOWN;
        }
        if (ids.keySet().containsAll(InternalTopicsView.TOPICS)) {
            Set<String> listed = partitions.stream().map(TopicPartition::topic).collect(Collectors.toSet());
            if (!listed.containsAll(InternalTopicsView.TOPICS)) {
                // Both exist, but this consumer's metadata does not list the partitions of one yet (it was created a moment
                // ago). Assigning now would leave that topic unread for good: its id never changes, so no later check looks
                // again, and this broker would decide on an image without the partition states.
                log.info("The mirror's internal topics exist, but this broker's metadata does not list the partitions of {} "
                    + "yet; looking again", InternalTopicsView.TOPICS.stream().filter(t -> !listed.contains(t)).toList());
                return Look.UNKNOWN;
            }
            // Before assigning: an assignment (which a retry after a failure keeps) always comes with its initial ends.
            initialEnds = LogEnds.capture(consumer, partitions, CLIENT_TIMEOUT);
            Set<String> recordsDeleted = consumer.beginningOffsets(partitions, CLIENT_TIMEOUT).entrySet().stream()
                .filter(e -> e.getValue() > 0).map(e -> e.getKey().topic()).collect(Collectors.toSet());
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            incarnation = ids;
            incarnationLoaded = false;
            lookingForTopics = false;
            publish(fence.startIncarnation(ids, recordsDeleted));
            if (fence.onlyStateLost()) {
                stateLost.run();
            }
            checkConfigs();
            nextIncarnationCheckMs = time.milliseconds() + INCARNATION_CHECK_MS;
            return Look.ASSIGNED;
        }
        Set<String> missing = new TreeSet<>(InternalTopicsView.TOPICS);
        missing.removeAll(ids.keySet());
        fence.topicsDeleted(missing);
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
        return Look.ABSENT;
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
        nextIncarnationCheckMs = time.milliseconds() + INCARNATION_CHECK_MS;
        Map<String, String> ids;
        try {
            ids = topics.topicIds();
        } catch (KafkaException e) {
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

    /** Logs, when they change, the configs of the internal topics that can lose mirror state. */
    private void checkConfigs() {
        List<InternalTopics.Misconfiguration> found;
        try {
            found = topics.misconfigurations();
        } catch (KafkaException e) {
            log.debug("Cannot check the configs of the mirror's internal topics now: {}", e.toString());
            return;
        }
        if (!found.equals(misconfigurations)) {
            found.forEach(InternalTopicsInitializer::logMisconfiguration);
            if (found.isEmpty()) {
                log.info("The configs of the mirror's internal topics are safe again");
            }
        }
        misconfigurations = found;
    }

    private static IllegalStateException closedException() {
        return new IllegalStateException("the mirror image tailer is closed");
    }

    /** Closes the consumer and fails the read barriers still waiting (on the tailer thread when it ran). */
    private void release() {
        consumer.close(Duration.ZERO);
        IllegalStateException closed = closedException();
        barrierRequests.forEach(f -> f.completeExceptionally(closed));
        barriers.forEach(b -> b.done().completeExceptionally(closed));
    }

    @Override
    public void close() {
        running = false;
        synchronized (closeSignal) {
            closeSignal.notifyAll();
        }
        consumer.wakeup();
        if (thread.isAlive()) {
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        } else if (thread.getState() == Thread.State.NEW) {
            release(); // rounds were run by the caller (tests)
        }
        topics.close();
        health.close();
    }
}
