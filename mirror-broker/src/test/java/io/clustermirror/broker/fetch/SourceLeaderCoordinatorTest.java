package io.clustermirror.broker.fetch;

import io.clustermirror.common.compat.LogPrefix;
import io.clustermirror.common.records.HeldLogStarts;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@link SourceLeaderCoordinator} on a mock clock, its passes run by the test (the thread is started only to close
 * it): a partition goes to the fetcher of its source leader and moves when the leader moves; a source that does not
 * answer is asked again after a backoff that doubles up to its bound, and its partitions are reported unavailable until
 * they fetch again; a partition removed while pending is never assigned; closing stops a call the source does not answer.
 */
class SourceLeaderCoordinatorTest {
    private static final TopicPartition TP = new TopicPartition("orders", 0);
    private static final Uuid TOPIC_ID = Uuid.randomUuid();
    private static final long BACKOFF_MS = 100L;
    private static final long BACKOFF_MAX_MS = 1_000L;
    private static final long REFRESH_MS = 10_000L;
    private static final FetchSettings SETTINGS = new FetchSettings(false, 500, 1, 1 << 20, 1 << 20, BACKOFF_MS, BACKOFF_MAX_MS,
        30_000, 30_000L, 0L);

    private final MockTime time = new MockTime(0, 1_700_000_000_000L, 0);
    private final long startMs = time.milliseconds();
    private final Metrics metrics = new Metrics();
    private final LogPrefix logPrefix = LogPrefix.of("[test] ");
    private final RecordingListener listener = new RecordingListener();
    private final FakeSource source = new FakeSource();
    private final FakeFetchers fetchers = new FakeFetchers();
    private final FetchedPartitions partitions = new FetchedPartitions(metrics, "dr", 0, listener, logPrefix, st -> coordinator().detach(st));
    private final SourceLeaderCoordinator coordinator = new SourceLeaderCoordinator(
        new FetchContext("dr", SETTINGS, new FetchThrottle(time, FetchThrottle.UNLIMITED), partitions,
            (st, checkOffsets, delayMs) -> coordinator().rediscover(st, checkOffsets, delayMs), null, listener, time, logPrefix),
        fetchers, source::newClient, REFRESH_MS, metrics);

    @AfterEach
    void close() {
        coordinator.closeHealth();
        partitions.close();
        metrics.close();
    }

    @Test
    void aNewPartitionGoesToTheFetcherOfItsSourceLeaderAndStaysWhileTheLeaderDoes() throws Exception {
        source.lead(1);
        PartitionFetchState st = add();

        coordinator.runPass();
        assertEquals(List.of("assign orders-0 to 1 @0"), fetchers.events);
        assertEquals(1, st.sourceBroker);

        passAfter(REFRESH_MS);
        assertEquals(List.of(0L, REFRESH_MS), source.describedAt, "the refresh looked at the leader");
        assertFalse(st.leaderMoved);
        assertEquals(List.of("assign orders-0 to 1 @0", "stop idle fetchers @" + REFRESH_MS), fetchers.events);
    }

    @Test
    void aPartitionWhoseSourceLeaderMovedGoesToTheNewLeadersFetcherAtTheNextRefresh() throws Exception {
        source.lead(1);
        PartitionFetchState st = add();
        coordinator.runPass();

        source.lead(2);
        passAfter(REFRESH_MS - 1);
        assertFalse(st.leaderMoved, "not looked at before the refresh interval");

        passAfter(1);
        assertTrue(st.leaderMoved);

        // Its fetcher lets go of it, as a SourceFetcher does when it sees the flag.
        st.leaderMoved = false;
        fetchers.unassign(st);
        coordinator.rediscover(st, false, 0L);
        coordinator.runPass();

        assertEquals(List.of("assign orders-0 to 1 @0", "stop idle fetchers @" + REFRESH_MS, "unassign orders-0",
            "assign orders-0 to 2 @" + REFRESH_MS), fetchers.events);
        assertEquals(2, st.sourceBroker);
    }

    @Test
    void aSourceThatDoesNotAnswerIsAskedAgainAfterABackoffThatDoublesUpToItsBound() throws Exception {
        source.down = true;
        PartitionFetchState st = add();

        coordinator.runPass();
        runFor(8_000L);

        // 100, 200, 400, 800, then 1000 (the bound) between the attempts.
        assertEquals(List.of(0L, 100L, 300L, 700L, 1_500L, 2_500L, 3_500L, 4_500L, 5_500L, 6_500L, 7_500L), source.describedAt);
        assertEquals(List.of(), fetchers.events);
        assertTrue(st.sourceProblem.startsWith("describe of source topic orders failed"), st.sourceProblem);
    }

    @Test
    void aSourceDownIsReportedUnavailableAndTheNextAnswerAndFetchEndIt() throws Exception {
        source.down = true;
        PartitionFetchState st = add();

        coordinator.runPass();
        runFor(FetchSettings.SOURCE_UNAVAILABLE_AFTER_MS - 10);
        assertEquals(List.of(), listener.eventsOf(TP));
        runFor(10);
        assertEquals(1, listener.eventsOf(TP).size());
        assertTrue(listener.eventsOf(TP).get(0).startsWith("unavailable orders-0 no fetch of orders-0 from the source succeeded for 5 s"),
            listener.eventsOf(TP).get(0));
        assertTrue(listener.eventsOf(TP).get(0).endsWith(st.sourceProblem));

        source.down = false;
        source.lead(1);
        runFor(1_000L);
        assertEquals(List.of("assign orders-0 to 1 @5500"), fetchers.events, "at the attempt due after the backoff");

        partitions.fetched(st, time.milliseconds()); // its fetcher's first fetch
        assertEquals("available orders-0 ", listener.eventsOf(TP).get(listener.eventsOf(TP).size() - 1));
        assertEquals(2, listener.eventsOf(TP).size());
    }

    @Test
    void aPartitionRemovedWhilePendingIsNeitherLookedUpNorAssigned() throws Exception {
        source.down = true;
        add();
        coordinator.runPass();

        source.down = false;
        source.lead(1);
        partitions.remove(TP);
        runFor(2_000L);

        assertEquals(List.of(0L), source.describedAt);
        assertEquals(List.of("unassign orders-0"), fetchers.events, "detached, never assigned");
    }

    @Test
    void closingStopsTheThreadDuringACallTheSourceDoesNotAnswerAndClosesItsClient() throws Exception {
        source.lead(1);
        source.answering = false;
        add();

        coordinator.start();
        assertTrue(source.asked.await(30, TimeUnit.SECONDS));
        coordinator.initiateShutdown();
        coordinator.join(TimeUnit.SECONDS.toMillis(30));

        assertFalse(coordinator.isAlive());
        assertEquals(1, source.closed);
        assertEquals(List.of(), fetchers.events);
    }

    private SourceLeaderCoordinator coordinator() {
        return coordinator;
    }

    private PartitionFetchState add() {
        PartitionFetchState st = new PartitionFetchState(TP, TOPIC_ID, 0L, 1, -1, time.milliseconds(),
            new DestinationLogStart(0L, HeldLogStarts.NONE, null), 0L);
        partitions.add(st);
        coordinator.rediscover(st, false, 0L);
        return st;
    }

    private void passAfter(long ms) throws InterruptedException {
        time.sleep(ms);
        coordinator.runPass();
    }

    /** Moves the clock {@code ms} on, running a pass every 10 ms of it, as the thread would while it has work due. */
    private void runFor(long ms) throws InterruptedException {
        for (long elapsed = 0; elapsed < ms; elapsed += 10) {
            passAfter(10);
        }
    }

    private long elapsedMs() {
        return time.milliseconds() - startMs;
    }

    /** The source's metadata, led by one broker; when down, every call fails as after the request timeout. */
    private final class FakeSource implements SourceMetadata {
        final List<Long> describedAt = new ArrayList<>();
        final CountDownLatch asked = new CountDownLatch(1);
        volatile boolean down;
        volatile boolean answering = true;
        int closed; // read after the coordinator thread ended
        private volatile TopicDescription orders;

        void lead(int brokerId) {
            Node leader = new Node(brokerId, "source-" + brokerId, 9092);
            orders = new TopicDescription(TP.topic(), false, List.of(new TopicPartitionInfo(0, leader, List.of(leader), List.of(leader))),
                Set.of(), TOPIC_ID);
        }

        SourceMetadata newClient() {
            return this;
        }

        @Override
        public Map<String, CompletableFuture<TopicDescription>> describeTopics(Set<String> topics) {
            describedAt.add(elapsedMs());
            asked.countDown();
            Map<String, CompletableFuture<TopicDescription>> out = new HashMap<>();
            topics.forEach(t -> out.put(t, answer(orders)));
            return out;
        }

        @Override
        public Map<TopicPartition, CompletableFuture<Long>> offsets(Set<TopicPartition> tps, OffsetSpec spec) {
            Map<TopicPartition, CompletableFuture<Long>> out = new HashMap<>();
            tps.forEach(tp -> out.put(tp, answer(0L)));
            return out;
        }

        private <T> CompletableFuture<T> answer(T value) {
            if (!answering) {
                return new CompletableFuture<>();
            }
            return down ? CompletableFuture.failedFuture(new TimeoutException("Timed out waiting for a node assignment"))
                : CompletableFuture.completedFuture(value);
        }

        @Override
        public void close() {
            closed++;
        }
    }

    /** The fetchers' side: records what the coordinator assigns, as a {@link SourceFetcher} marks the partition its own. */
    private final class FakeFetchers implements FetcherAssignments {
        final List<String> events = new ArrayList<>();

        @Override
        public void assign(PartitionFetchState st, Node leader) {
            st.sourceBroker = leader.id();
            events.add("assign " + st.tp + " to " + leader.id() + " @" + elapsedMs());
        }

        @Override
        public void unassign(PartitionFetchState st) {
            events.add("unassign " + st.tp);
        }

        @Override
        public void stopIdle() {
            events.add("stop idle fetchers @" + elapsedMs());
        }
    }
}
