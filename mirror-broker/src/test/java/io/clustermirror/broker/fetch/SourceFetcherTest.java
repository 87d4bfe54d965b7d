package io.clustermirror.broker.fetch;

import io.clustermirror.broker.node.ThreadHealth;
import io.clustermirror.broker.bridge.AppendResult;
import io.clustermirror.broker.fetch.RecordingListener.Failure;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.batch.StoredBatches;
import io.clustermirror.common.compat.FetchPosition;
import io.clustermirror.common.compat.FetchedPartition;
import io.clustermirror.common.compat.LogPrefix;
import io.clustermirror.common.compat.SourceEndpoint;
import io.clustermirror.common.records.HeldLogStarts;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

import static io.clustermirror.broker.TestBatches.concat;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The fetch loop of {@link SourceFetcher}, one round at a time, against a scripted {@link SourceEndpoint}. */
class SourceFetcherTest {
    private static final Uuid TOPIC_ID = Uuid.fromString("x9yd0nJ0RBSuX8oeqmvg4A");
    private static final int DEST_EPOCH = 3;
    /** Follows the source's log start at once (policy apply). */
    private static final FetchSettings SETTINGS = new FetchSettings(false, 500, 1, 1 << 20, 1 << 20, 100L, 1_000L,
        30_000, 30_000L, 0L);
    private static final long HOLD_MS = 60_000L;

    private final MockTime time = new MockTime();
    private final Metrics metrics = new Metrics();
    private final LogPrefix logPrefix = LogPrefix.of("[test] ");
    private final RecordingListener listener = new RecordingListener();
    private final RecordingAppender appender = new RecordingAppender();
    private final List<Rediscovered> rediscovered = new ArrayList<>();
    private final FakeEndpoint endpoint = new FakeEndpoint();
    private final FetchedPartitions partitions = new FetchedPartitions(metrics, "m", 0, listener, logPrefix,
        st -> fetcher().unassign(st));
    private final SourceFetcher fetcher = new SourceFetcher(
        new FetchContext("m", SETTINGS, new FetchThrottle(time, FetchThrottle.UNLIMITED), partitions,
            (st, check, delay) -> rediscovered.add(new Rediscovered(st.tp, check, delay)), appender, listener, time, logPrefix),
        endpoint, new ThreadHealth(metrics, logPrefix.logger(SourceFetcherTest.class), "fetcher-m-1"), metrics.sensor("bytes"));

    private record Rediscovered(TopicPartition tp, boolean checkOffsets, long delayMs) {
    }

    @AfterEach
    void close() {
        partitions.close();
        metrics.close();
    }

    @Test
    void appendsTheFetchedBatchesInOrderAndAsTheyAreThenFetchesOnFromTheNextOffset() {
        TopicPartition p0 = add(0, 0, -1);
        TopicPartition p1 = add(1, 10, 4);
        ByteBuffer data0 = concat(batch(0, 3, 4), batch(3, 2, 4), batch(5, 1, 5));
        ByteBuffer data1 = batch(10, 2, 4);
        endpoint.answer(req -> fetched(Map.of(p0, data(data0, 6), p1, data(data1, 12))));

        fetcher.runOnce();

        Map<TopicPartition, FetchPosition> first = endpoint.requests.get(0);
        assertEquals(0L, first.get(p0).fetchOffset());
        assertEquals(Optional.empty(), first.get(p0).lastFetchedEpoch());
        assertEquals(Optional.of(4), first.get(p1).lastFetchedEpoch());
        assertEquals(TOPIC_ID, first.get(p1).topicId());
        // Per partition: one append per source epoch, in offset order, of exactly the fetched bytes, at the destination epoch.
        List<Appended> appended0 = appender.of(p0);
        assertEquals(2, appended0.size());
        assertArrayEquals(bytes(data0), bytes(appended0.get(0).records(), appended0.get(1).records()));
        assertArrayEquals(bytes(data1), bytes(appender.of(p1).get(0).records()));
        assertTrue(appender.appended.stream().allMatch(a -> a.destLeaderEpoch() == DEST_EPOCH));
        assertEquals(List.of("progress " + p0 + " 4 4 0", "progress " + p0 + " 5 5 5"), listener.eventsOf(p0));
        assertEquals(List.of("progress " + p1 + " 11 4 -1"), listener.eventsOf(p1));

        endpoint.answer(req -> fetched(Map.of()));
        fetcher.runOnce();
        Map<TopicPartition, FetchPosition> second = endpoint.requests.get(1);
        assertEquals(6L, second.get(p0).fetchOffset());
        assertEquals(Optional.of(5), second.get(p0).lastFetchedEpoch());
        assertEquals(12L, second.get(p1).fetchOffset());
        assertEquals(Map.of(p0, 6L, p1, 12L), partitions.fetchOffsets());
    }

    @Test
    void reportsHowOldTheUnmirroredRecordsAreAfterEachResponseUntilCaughtUp() {
        TopicPartition tp = add(0, 0, -1);
        endpoint.answer(req -> fetched(Map.of(tp, data(batch(0, 3, 4), 10))));
        fetcher.runOnce();
        endpoint.answer(req -> fetched(Map.of(tp, data(batch(3, 7, 4), 10))));
        fetcher.runOnce();
        endpoint.answer(req -> fetched(Map.of(tp, data(ByteBuffer.allocate(0), 10))));
        fetcher.runOnce();

        // Behind after the first response: the records after offset 2 were written no earlier than its newest (1000 + 2).
        assertEquals(List.of(tp + " 1002", tp + " -1"), listener.oldestUnmirrored, "reported on change only");
    }

    @Test
    void theSessionGoesOnThroughPartitionAndSessionErrors() {
        TopicPartition p0 = add(0, 0, -1);
        TopicPartition p1 = add(1, 0, -1);
        endpoint.answer(req -> fetched(Map.of(p0, error(Errors.NOT_LEADER_OR_FOLLOWER), p1, data(batch(0, 1, 4), 1))));
        endpoint.answer(req -> new SourceEndpoint.SessionError(Errors.FETCH_SESSION_ID_NOT_FOUND));
        endpoint.answer(req -> fetched(Map.of()));

        fetcher.runOnce();
        fetcher.runOnce();
        fetcher.runOnce();

        // The released partition is left out of the next requests (the session forgets it); the other goes on.
        assertEquals(Set.of(p0, p1), endpoint.requests.get(0).keySet());
        assertEquals(Set.of(p1), endpoint.requests.get(1).keySet());
        assertEquals(Set.of(p1), endpoint.requests.get(2).keySet());
        assertEquals(1L, endpoint.requests.get(2).get(p1).fetchOffset());
        assertEquals(0, endpoint.resets, "no error here is the fetcher's to reset the session for");
        assertEquals(List.of(new Rediscovered(p0, false, 0L)), rediscovered);
    }

    @Test
    void aPartitionErrorMovesOrFailsOnlyThatPartition() {
        TopicPartition outOfRange = add(0, 50, 4);
        TopicPartition notLeader = add(1, 0, -1);
        TopicPartition fenced = add(2, 0, -1);
        TopicPartition corruptReported = add(3, 0, -1);
        TopicPartition corruptBytes = add(4, 0, -1);
        TopicPartition healthy = add(5, 0, -1);
        Map<TopicPartition, FetchedPartition> response = new LinkedHashMap<>();
        response.put(outOfRange, error(Errors.OFFSET_OUT_OF_RANGE));
        response.put(notLeader, error(Errors.NOT_LEADER_OR_FOLLOWER));
        response.put(fenced, error(Errors.FENCED_LEADER_EPOCH));
        response.put(corruptReported, error(Errors.CORRUPT_MESSAGE));
        response.put(corruptBytes, data(concat(batch(0, 2, 4), corrupt(batch(2, 2, 4))), 4));
        response.put(healthy, data(batch(0, 3, 4), 3));
        endpoint.answer(req -> fetched(response));

        fetcher.runOnce();

        assertEquals(List.of(new Rediscovered(outOfRange, true, 0L), new Rediscovered(notLeader, false, 0L),
            new Rediscovered(fenced, false, 0L)), rediscovered);
        assertEquals(List.of(new Failure(corruptReported, MirrorError.UNKNOWN_SERVER_ERROR),
            new Failure(corruptBytes, MirrorError.CORRUPT_MESSAGE)),
            listener.failures.stream().map(f -> new Failure(f.tp(), f.error())).toList());
        assertTrue(listener.failures.get(1).message().startsWith("source corrupt batch at offsets 2..3: Record is corrupt"),
            listener.failures.get(1).message());
        assertTrue(listener.failures.get(1).message().contains("(mirrored up to offset 1); nothing after it was appended"),
            listener.failures.get(1).message());
        // The good batch before the corrupt one is kept; nothing after it.
        assertEquals(List.of(corruptBytes, healthy), appender.appended.stream().map(Appended::tp).toList());
        assertEquals(Map.of(outOfRange, 50L, notLeader, 0L, fenced, 0L, healthy, 3L), partitions.fetchOffsets());

        endpoint.answer(req -> fetched(Map.of()));
        fetcher.runOnce();
        assertEquals(Set.of(healthy), endpoint.requests.get(1).keySet());
    }

    @Test
    void anUnreachableSourceIsReportedOnceAfterAWhileAndClearedByTheNextSuccessfulFetch() {
        TopicPartition tp = add(0, 0, -1);
        long after = FetchSettings.SOURCE_UNAVAILABLE_AFTER_MS;
        endpoint.answer(req -> new SourceEndpoint.Unreachable("connection refused"));
        fetcher.runOnce();
        partitions.reportUnavailable(time.milliseconds() + after - 1, after);
        assertEquals(List.of(), listener.eventsOf(tp), "not before " + after + " ms without a successful fetch");

        time.sleep(after);
        partitions.reportUnavailable(time.milliseconds(), after);
        partitions.reportUnavailable(time.milliseconds() + 1, after);
        List<String> reported = listener.eventsOf(tp);
        assertEquals(1, reported.size(), "reported once: " + reported);
        assertTrue(reported.get(0).contains("no fetch of t-0 from the source succeeded for 5 s (since ")
            && reported.get(0).contains("cannot fetch from source broker 1 at "), reported.get(0));
        assertTrue(reported.get(0).endsWith("(connection refused)"), reported.get(0));
        assertEquals(1L, unavailablePartitions());

        fetcher.assign(partitions.values().iterator().next()); // back from the coordinator
        endpoint.answer(req -> fetched(Map.of()));
        fetcher.runOnce();
        assertEquals("available t-0 ", listener.eventsOf(tp).get(1));
        assertEquals(0L, unavailablePartitions());
    }

    @Test
    void theLogSummaryNamesTheFirstPartitionsAndCountsTheRest() {
        assertEquals("t-0; t-1", FetchedPartitions.summary(List.of("t-0", "t-1")));
        List<String> seven = List.of("t-0", "t-1", "t-2", "t-3", "t-4", "t-5", "t-6");
        assertEquals("t-0; t-1; t-2; t-3; t-4; and 2 more", FetchedPartitions.summary(seven));
        assertEquals(FetchedPartitions.PARTITIONS_NAMED, FetchedPartitions.summary(seven.subList(0, 5)).split("; ").length);
    }

    private Object unavailablePartitions() {
        return metrics.metric(metrics.metricName("partitions-source-unavailable", FetcherMetrics.GROUP, Map.of("mirror", "m")))
            .metricValue();
    }

    @Test
    void aPartitionHeldBackAfterAnAnswerOfTheSourceIsNotUnavailable() {
        TopicPartition tp = add(0, 0, -1);
        long after = FetchSettings.SOURCE_UNAVAILABLE_AFTER_MS;
        endpoint.answer(req -> fetched(Map.of(tp, error(Errors.UNKNOWN_SERVER_ERROR))));
        fetcher.runOnce();
        PartitionFetchState st = partitions.values().iterator().next();
        st.notBeforeMs = time.milliseconds() + 3 * after; // as after many errors in a row
        partitions.reportUnavailable(time.milliseconds() + 3 * after, after);
        assertEquals(List.of(), listener.eventsOf(tp));
        partitions.reportUnavailable(time.milliseconds() + 4 * after, after);
        assertEquals(1, listener.eventsOf(tp).size(), "unavailable once the backoff is long over");
    }

    @Test
    void theLinkThrottleHoldsTheNextFetchBackAfterKeepingTheWholeResponse() {
        ByteBuffer data = batch(0, 3, 4);
        long limit = data.remaining() - data.remaining() / 20; // one response puts the throttle ~50 ms in debt
        FetchThrottle throttle = new FetchThrottle(time, limit);
        SourceFetcher limited = new SourceFetcher(new FetchContext("m", SETTINGS, throttle, partitions,
            (st, check, delay) -> rediscovered.add(new Rediscovered(st.tp, check, delay)), appender, listener, time, logPrefix),
            endpoint, new ThreadHealth(metrics, logPrefix.logger(SourceFetcherTest.class), "fetcher-m-2"), metrics.sensor("bytes"));
        TopicPartition tp = new TopicPartition("t", 0);
        PartitionFetchState st = new PartitionFetchState(tp, TOPIC_ID, 0L, DEST_EPOCH, -1, time.milliseconds(),
            new DestinationLogStart(0L, HeldLogStarts.NONE, null), 0L);
        partitions.add(st);
        limited.assign(st);
        endpoint.answer(req -> fetched(Map.of(tp, data(data, 3))));
        limited.runOnce();
        assertArrayEquals(bytes(data), bytes(appender.of(tp).get(0).records()), "nothing dropped");
        long delay = throttle.delayMs();
        assertTrue(delay > 0, "in debt");

        limited.runOnce();
        assertEquals(1, endpoint.requests.size(), "no request while in debt");
        long after = FetchSettings.SOURCE_UNAVAILABLE_AFTER_MS;
        partitions.reportUnavailable(time.milliseconds() + delay + after - 1, after);
        assertTrue(listener.eventsOf(tp).stream().noneMatch(e -> e.startsWith("unavailable")),
            "held back by the throttle, not unavailable: " + listener.eventsOf(tp));

        time.sleep(delay);
        endpoint.answer(req -> fetched(Map.of()));
        limited.runOnce();
        assertEquals(3L, endpoint.requests.get(1).get(tp).fetchOffset(), "fetches on where it stopped");
        assertEquals((double) delay, metrics.metric(metrics.metricName("fetch-throttle-time-ms-total", FetcherMetrics.GROUP,
            Map.of("mirror", "m"))).metricValue());
        assertTrue(listener.failures.isEmpty());
    }

    @Test
    void aTransientPartitionErrorBacksOffThatPartitionExponentially() {
        TopicPartition flaky = add(0, 0, -1);
        TopicPartition steady = add(1, 0, -1);
        endpoint.answer(req -> fetched(Map.of(flaky, error(Errors.UNKNOWN_SERVER_ERROR), steady, data(batch(0, 1, 4), 1))));
        fetcher.runOnce();

        endpoint.answer(req -> fetched(Map.of()));
        fetcher.runOnce();
        assertEquals(Set.of(steady), endpoint.requests.get(1).keySet(), "within the first backoff (100 ms)");

        time.sleep(SETTINGS.partitionBackoffMs(1));
        endpoint.answer(req -> fetched(Map.of(flaky, error(Errors.UNKNOWN_SERVER_ERROR))));
        fetcher.runOnce();
        assertEquals(Set.of(flaky, steady), endpoint.requests.get(2).keySet());

        time.sleep(SETTINGS.partitionBackoffMs(1));
        endpoint.answer(req -> fetched(Map.of()));
        fetcher.runOnce();
        assertEquals(Set.of(steady), endpoint.requests.get(3).keySet(), "the second backoff is twice the first");

        time.sleep(SETTINGS.partitionBackoffMs(2) - SETTINGS.partitionBackoffMs(1));
        endpoint.answer(req -> fetched(Map.of(flaky, data(batch(0, 1, 4), 1))));
        fetcher.runOnce();
        assertEquals(Set.of(flaky, steady), endpoint.requests.get(4).keySet());
        assertEquals(1L, partitions.fetchOffsets().get(flaky));
        assertTrue(listener.failures.isEmpty());
        assertTrue(rediscovered.isEmpty());
    }

    @Test
    void divergenceIsSignalledAndNothingOfTheResponseIsAppended() {
        TopicPartition tp = add(0, 8, 5);
        endpoint.answer(req -> fetched(Map.of(tp, diverged(batch(8, 2, 6), 10, 5, 6))));

        fetcher.runOnce();

        assertEquals(List.of("divergence " + tp + " 5 6"), listener.events);
        assertTrue(appender.appended.isEmpty());
        assertFalse(partitions.fetchOffsets().containsKey(tp));
        assertEquals(0, fetcher.assignedCount());
    }

    @Test
    void aPartitionRemovedWhileItsFetchIsInFlightGetsNothingAppended() {
        TopicPartition removed = add(0, 0, -1);
        TopicPartition kept = add(1, 0, -1);
        endpoint.answer(req -> {
            partitions.remove(removed);
            return fetched(Map.of(removed, data(batch(0, 2, 4), 2), kept, data(batch(0, 2, 4), 2)));
        });

        fetcher.runOnce();

        assertEquals(List.of(kept), appender.appended.stream().map(Appended::tp).toList());
        assertEquals(Map.of(kept, 2L), partitions.fetchOffsets());
        endpoint.answer(req -> fetched(Map.of()));
        fetcher.runOnce();
        assertEquals(Set.of(kept), endpoint.requests.get(1).keySet());
    }

    @Test
    void anUnreachableBrokerHandsItsPartitionsBackWithBackoffAndRefusedCredentialsFailThem() {
        TopicPartition p0 = add(0, 0, -1);
        endpoint.answer(req -> new SourceEndpoint.Unreachable("connection failed"));
        fetcher.runOnce();
        assertEquals(List.of(new Rediscovered(p0, false, SETTINGS.partitionBackoffMs(1))), rediscovered);
        assertEquals(0, fetcher.assignedCount());

        TopicPartition p1 = add(1, 0, -1);
        endpoint.answer(req -> new SourceEndpoint.AuthenticationFailed(new SaslAuthenticationException("bad password")));
        fetcher.runOnce();
        assertEquals(List.of(new Failure(p1, MirrorError.SOURCE_CLUSTER_UNREACHABLE)),
            listener.failures.stream().map(f -> new Failure(f.tp(), f.error())).toList());
        assertTrue(listener.failures.get(0).message().contains("bad password"));
    }

    @Test
    void underTheApplyPolicyTheDestinationFollowsTheSourcesLogStartAtOnce() {
        TopicPartition tp = add(0, 10, 4);
        endpoint.answer(req -> fetched(Map.of(tp, dataFrom(ByteBuffer.allocate(0), 10, 5))));
        fetcher.runOnce();
        assertEquals(List.of(tp + " 5"), appender.logStartMoves);
        assertEquals(List.of(), listener.held, "nothing held");
    }

    @Test
    void aMoveOfTheSourcesLogStartIsHeldForTheHoldTimeThenFollowed() {
        SourceFetcher holding = holdingFetcher();
        TopicPartition tp = add(holding, 0, 10, 4, new DestinationLogStart(0L, HeldLogStarts.NONE, null), 10L);
        long seenAt = time.milliseconds();
        endpoint.answer(req -> fetched(Map.of(tp, dataFrom(ByteBuffer.allocate(0), 10, 5))));
        holding.runOnce();
        assertEquals(List.of(), appender.logStartMoves, "the destination keeps offsets [0, 5) readable");
        assertEquals(List.of(tp + " " + HeldLogStarts.NONE.observe(5, 0, seenAt)), listener.held);
        assertEquals(1L, metrics.metric(metrics.metricName("partitions-log-start-held", FetcherMetrics.GROUP,
            Map.of("mirror", "m"))).metricValue());

        time.sleep(HOLD_MS - 1);
        endpoint.answer(req -> fetched(Map.of(tp, dataFrom(ByteBuffer.allocate(0), 10, 5))));
        holding.runOnce();
        assertEquals(List.of(), appender.logStartMoves, "not before the hold has passed");

        time.sleep(1);
        endpoint.answer(req -> fetched(Map.of(tp, dataFrom(ByteBuffer.allocate(0), 10, 5))));
        holding.runOnce();
        assertEquals(List.of(tp + " 5"), appender.logStartMoves);
        assertEquals(tp + " " + HeldLogStarts.NONE, listener.held.get(listener.held.size() - 1), "nothing held any more");
    }

    /**
     * An empty destination that starts at a source log start inside a batch (here 10 in a batch of 0-19, which Kafka
     * returns whole) follows it at once: the records below it were deleted on the source before the destination got
     * any, so hiding them deletes nothing the destination ever served as mirrored.
     */
    @Test
    void anEmptyDestinationFollowsTheSourcesLogStartInsideItsFirstBatchAtOnce() {
        SourceFetcher holding = holdingFetcher();
        appender.refuseLogStartAboveAppended = true;
        TopicPartition tp = add(holding, 0, 10, -1, new DestinationLogStart(0L, HeldLogStarts.NONE, null), 0L);
        endpoint.answer(req -> fetched(Map.of(tp, dataFrom(batch(0, 20, 1), 20, 10))));
        holding.runOnce();
        endpoint.answer(req -> fetched(Map.of(tp, dataFrom(ByteBuffer.allocate(0), 20, 10))));
        holding.runOnce();
        assertEquals(List.of(tp + " 10"), appender.logStartMoves);
        assertEquals(List.of(), listener.held, "nothing held");
    }

    /**
     * A source whose records were all deleted (its log starts where it ends, 849) has nothing to fetch: an empty
     * destination starts its log there at once, so that it ends where the source does before any record arrives, and a
     * stop or a failover keeps the source's offsets. Nothing is held: the destination never had those records.
     */
    @Test
    void anEmptyDestinationOfASourceWhoseRecordsWereAllDeletedStartsWhereTheSourceEnds() {
        SourceFetcher holding = holdingFetcher();
        appender.refuseLogStartAboveAppended = true;
        TopicPartition tp = add(holding, 0, 849, -1, new DestinationLogStart(0L, HeldLogStarts.NONE, null), 0L);
        endpoint.answer(req -> fetched(Map.of(tp, dataFrom(ByteBuffer.allocate(0), 849, 849))));
        holding.runOnce();
        assertEquals(List.of(tp + " 849"), appender.emptyStarts);
        assertEquals(List.of(), appender.logStartMoves);
        assertEquals(List.of(), listener.held, "nothing held");

        // With a record at or past the source's log start, the destination appends it where it is instead.
        TopicPartition withRecords = add(holding, 1, 10, -1, new DestinationLogStart(0L, HeldLogStarts.NONE, null), 0L);
        endpoint.answer(req -> fetched(Map.of(withRecords, dataFrom(batch(10, 2, 1), 12, 10))));
        holding.runOnce();
        assertEquals(List.of(tp + " 849"), appender.emptyStarts, "only the partition with nothing to fetch");
    }

    @Test
    void aNewLeaderGoesOnWithTheHoldItsPredecessorRecorded() {
        SourceFetcher holding = holdingFetcher();
        HeldLogStarts recorded = HeldLogStarts.NONE.observe(5, 0, time.milliseconds() - HOLD_MS + 10);
        TopicPartition tp = add(holding, 0, 10, 4, new DestinationLogStart(0L, recorded, null), 10L);
        endpoint.answer(req -> fetched(Map.of(tp, dataFrom(ByteBuffer.allocate(0), 10, 5))));
        holding.runOnce();
        assertEquals(List.of(), appender.logStartMoves, "seen again: the recorded time counts, not this sighting's");
        time.sleep(10);
        endpoint.answer(req -> fetched(Map.of(tp, dataFrom(ByteBuffer.allocate(0), 10, 5))));
        holding.runOnce();
        assertEquals(List.of(tp + " 5"), appender.logStartMoves);
    }

    @Test
    void aMoveAcrossOffsetsTheDestinationNeverHeldIsFollowedAtOnceAndOnlyThatFar() {
        SourceFetcher holding = holdingFetcher();
        // Gone on past [10, 20), which the source deleted before they were mirrored: the destination's log was empty above 10.
        TopicPartition tp = add(holding, 0, 20, -1, new DestinationLogStart(10L, HeldLogStarts.NONE, null), 10L);
        endpoint.answer(req -> fetched(Map.of(tp, dataFrom(batch(20, 5, 4), 25, 22))));
        holding.runOnce();
        assertEquals(List.of(tp + " 20"), appender.logStartMoves, "up to the first mirrored offset at once, not past it");
        assertEquals(List.of(tp + " " + HeldLogStarts.NONE.observe(22, 20, time.milliseconds())), listener.held,
            "the move past mirrored records is held");
    }

    // ------------------------------------------------------------------ fixture

    private SourceFetcher fetcher() {
        return fetcher;
    }

    private TopicPartition add(int partition, long fetchOffset, int lastFetchedEpoch) {
        return add(fetcher, partition, fetchOffset, lastFetchedEpoch, new DestinationLogStart(0L, HeldLogStarts.NONE, null), fetchOffset);
    }

    private TopicPartition add(SourceFetcher to, int partition, long fetchOffset, int lastFetchedEpoch, DestinationLogStart logStart,
                               long destLogEndOffset) {
        TopicPartition tp = new TopicPartition("t", partition);
        PartitionFetchState st = new PartitionFetchState(tp, TOPIC_ID, fetchOffset, DEST_EPOCH, lastFetchedEpoch, time.milliseconds(),
            logStart, destLogEndOffset);
        partitions.add(st);
        to.assign(st);
        return tp;
    }

    /** A fetcher that holds moves of the source's log start for {@link #HOLD_MS} (policy hold). */
    private SourceFetcher holdingFetcher() {
        FetchSettings holding = new FetchSettings(false, 500, 1, 1 << 20, 1 << 20, 100L, 1_000L, 30_000, 30_000L, HOLD_MS);
        return new SourceFetcher(new FetchContext("m", holding, new FetchThrottle(time, FetchThrottle.UNLIMITED), partitions,
            (st, check, delay) -> rediscovered.add(new Rediscovered(st.tp, check, delay)), appender, listener, time, logPrefix),
            endpoint, new ThreadHealth(metrics, logPrefix.logger(SourceFetcherTest.class), "fetcher-m-3"), metrics.sensor("bytes"));
    }

    private static ByteBuffer batch(long base, int n, int sourceEpoch) {
        return io.clustermirror.broker.TestBatches.batch(base, n, 7L, (short) 0, (int) base, sourceEpoch);
    }

    /** The batch with one byte of its last record flipped: its CRC no longer matches. */
    private static ByteBuffer corrupt(ByteBuffer records) {
        ByteBuffer copy = concat(records);
        int last = copy.limit() - 1;
        copy.put(last, (byte) (copy.get(last) ^ 0x5a));
        return copy;
    }

    private static SourceEndpoint.Outcome fetched(Map<TopicPartition, FetchedPartition> partitions) {
        return new SourceEndpoint.Fetched(partitions);
    }

    private static FetchedPartition data(ByteBuffer records, long highWatermark) {
        return dataFrom(records, highWatermark, 0L);
    }

    private static FetchedPartition dataFrom(ByteBuffer records, long highWatermark, long logStartOffset) {
        return new FetchedPartition(Errors.NONE, highWatermark, highWatermark, logStartOffset, Optional.empty(), records.duplicate());
    }

    private static FetchedPartition diverged(ByteBuffer records, long highWatermark, int epoch, long endOffset) {
        return new FetchedPartition(Errors.NONE, highWatermark, highWatermark, 0L,
            Optional.of(new FetchedPartition.EpochEnd(epoch, endOffset)), records.duplicate());
    }

    private static FetchedPartition error(Errors error) {
        return new FetchedPartition(error, -1L, -1L, -1L, Optional.empty(), ByteBuffer.allocate(0));
    }

    private static byte[] bytes(ByteBuffer... parts) {
        ByteBuffer all = concat(parts);
        byte[] out = new byte[all.remaining()];
        all.duplicate().get(out);
        return out;
    }

    /** Answers each fetch with the next scripted answer and keeps what was asked. */
    private static final class FakeEndpoint implements SourceEndpoint {
        final List<Map<TopicPartition, FetchPosition>> requests = new ArrayList<>();
        final Deque<Function<Map<TopicPartition, FetchPosition>, Outcome>> answers = new ArrayDeque<>();
        int resets;

        void answer(Function<Map<TopicPartition, FetchPosition>, Outcome> answer) {
            answers.add(answer);
        }

        @Override
        public Node node() {
            return new Node(1, "source-1", 9092);
        }

        @Override
        public Outcome fetch(Map<TopicPartition, FetchPosition> partitions) {
            requests.add(Map.copyOf(partitions));
            return answers.remove().apply(partitions);
        }

        @Override
        public void resetSession(Throwable cause) {
            resets++;
        }

        @Override
        public int sessionId() {
            return 0;
        }

        @Override
        public void initiateClose() {
        }

        @Override
        public void close() {
        }
    }

    private record Appended(TopicPartition tp, int destLeaderEpoch, ByteBuffer records) {
    }

    private static final class RecordingAppender implements PartitionAppender {
        final List<Appended> appended = new ArrayList<>();

        List<Appended> of(TopicPartition tp) {
            return appended.stream().filter(a -> a.tp().equals(tp)).toList();
        }

        @Override
        public AppendResult append(TopicPartition partition, int destLeaderEpoch, ByteBuffer batches) {
            // As Kafka's append: every batch's CRC is checked first, and a corrupt one refuses the whole append.
            List<StoredBatch> all = StoredBatches.of(batches);
            all.forEach(StoredBatch::ensureValid);
            appended.add(new Appended(partition, destLeaderEpoch, batches.duplicate()));
            long last = -1;
            long first = -1;
            for (StoredBatch b : all) {
                first = first < 0 ? b.baseOffset() : first;
                last = b.lastOffset();
            }
            appendedEnds.merge(partition, last + 1, Math::max);
            return new AppendResult(first, last, last + 1);
        }

        final List<String> logStartMoves = new ArrayList<>();
        /** The end of what was appended to each partition, where a test asks for Kafka's rule below. */
        final Map<TopicPartition, Long> appendedEnds = new HashMap<>();
        /** As Kafka, refuse a log start above the high watermark, here the end of what this appender appended. */
        boolean refuseLogStartAboveAppended;

        @Override
        public boolean advanceLogStartOffset(TopicPartition partition, int destLeaderEpoch, long sourceLogStartOffset) {
            if (refuseLogStartAboveAppended && sourceLogStartOffset > appendedEnds.getOrDefault(partition, 0L)) {
                return false;
            }
            logStartMoves.add(partition + " " + sourceLogStartOffset);
            return true;
        }

        /** The empty logs started at an offset: "partition offset". */
        final List<String> emptyStarts = new ArrayList<>();

        @Override
        public boolean startEmptyLogAt(TopicPartition partition, int destLeaderEpoch, long sourceLogStartOffset) {
            emptyStarts.add(partition + " " + sourceLogStartOffset);
            return true;
        }

        @Override
        public void removeProducersBefore(TopicPartition partition, int destLeaderEpoch, long barrierOffset) {
        }
    }
}
