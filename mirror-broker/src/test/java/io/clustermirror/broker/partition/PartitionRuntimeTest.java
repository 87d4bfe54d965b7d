package io.clustermirror.broker.partition;

import io.clustermirror.broker.bridge.LeaderChange;
import io.clustermirror.broker.fetch.ClusterLogReader;
import io.clustermirror.broker.fetch.DestinationLogStart;
import io.clustermirror.broker.fetch.FetchListener;
import io.clustermirror.broker.fetch.PartitionFetcher;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.barrier.BarrierBatch;
import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.CommandOp;
import io.clustermirror.common.records.FailureRetries;
import io.clustermirror.common.records.HeldDecision;
import io.clustermirror.common.records.LastCommand;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.StopCut;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static io.clustermirror.common.PartitionState.FAILED;
import static io.clustermirror.common.PartitionState.MIRRORING;
import static io.clustermirror.common.PartitionState.PAUSED;
import static io.clustermirror.common.PartitionState.PAUSING;
import static io.clustermirror.common.PartitionState.PREPARING;
import static io.clustermirror.common.PartitionState.STOPPED;
import static io.clustermirror.common.PartitionState.STOPPING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The executor of the partition state machines against in-memory collaborators, on mock time and a stepped event loop:
 * what it records in {@code __mirror_state} and how it drives the fetchers.
 */
class PartitionRuntimeTest {
    private static final TopicPartition TP = new TopicPartition("orders", 0);
    private static final Uuid TOPIC_ID = Uuid.fromString("a1b2c3d4e5f6a7b8c9d0eA");
    private static final String SOURCE_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAA";
    private static final int NODE = 1;
    private static final long BACKOFF_MS = 100;

    private final MockTime time = new MockTime(0, 1_700_000_000_000L, 0);
    private final ManualExecutor events = new ManualExecutor(time);
    private final ManualExecutor procedures = new ManualExecutor(time);
    private final InMemoryReplica replica = new InMemoryReplica(TP, NODE, 3);
    /** The source's log of the partition. */
    private final InMemoryReplica sourceLog = new InMemoryReplica(TP, 9, 2);
    private final List<PartitionStateRecord> written = new ArrayList<>();
    private final List<String> fetcherCalls = new ArrayList<>();
    /** The committed-offset rewinds asked for, as "mirror partition offset". */
    private final List<String> rewinds = new ArrayList<>();
    private FetchListener fetchListener;
    private CompletableFuture<Void> imageCatchUp = new CompletableFuture<>();
    /** Whether state records land at once; if not, their futures wait in {@link #unlanded}. */
    private boolean stateLands = true;
    private final List<CompletableFuture<Void>> unlanded = new ArrayList<>();
    /** Failures the source's image reads still throw, one per read. */
    private int sourceFailures;

    private final Metrics metrics = new Metrics();
    private final PartitionRuntime runtime = new PartitionRuntime(replica, "destination-cluster", metrics,
        new PartitionRuntime.Collaborators(
            new ProducerStateHygiene(replica, (tp, from, to) -> {
                throw new AssertionError("no repair of followers here");
            }, new DirectScheduler()),
            new PartitionRuntime.StateRecords() {
                @Override
                public CompletableFuture<Void> write(PartitionStateRecord record, List<String> superseded) {
                    written.add(record);
                    CompletableFuture<Void> landing = new CompletableFuture<>();
                    if (stateLands) {
                        landing.complete(null);
                    } else {
                        unlanded.add(landing);
                    }
                    return landing;
                }

                @Override
                public void close() {
                }
            },
            this::fetcher,
            new SourceCluster() {
                @Override
                public MirrorImage image(MirrorConfig config) {
                    if (sourceFailures > 0) {
                        sourceFailures--;
                        throw new IllegalStateException("source unreachable");
                    }
                    return MirrorImage.EMPTY;
                }

                @Override
                public SourceCluster.SourceLog log(MirrorConfig config, String clientId, TopicPartition tp, Uuid topicId) {
                    assertEquals(SOURCE_TOPIC_ID, topicId.toString());
                    return new SourceCluster.SourceLog() {
                        @Override
                        public List<StoredBatch> batches(long from, long to) {
                            List<StoredBatch> found = new ArrayList<>();
                            sourceLog.batches.forEach(b -> {
                                if (b.lastOffset() >= from && b.baseOffset() < to) {
                                    found.add(b);
                                }
                            });
                            return found;
                        }

                        @Override
                        public void close() {
                        }
                    };
                }

                @Override
                public Map<TopicPartition, ClusterLogReader.Head> heads(MirrorConfig config, String clientId,
                                                                        Map<TopicPartition, Long> offsets) {
                    long offset = offsets.get(TP);
                    return Map.of(TP, new ClusterLogReader.Head(sourceLog.logEnd(), sourceLog.batches.stream()
                        .filter(b -> b.lastOffset() >= offset).findFirst()));
                }
            },
            (tp, replicas, target) -> {
                throw new AssertionError("no handover with a single replica");
            },
            new PartitionRuntime.CommittedOffsets() {
                @Override
                public void rewind(String mirror, TopicPartition tp, long offset) {
                    rewinds.add(mirror + " " + tp + " " + offset);
                }

                @Override
                public void set(String mirror, TopicPartition tp, Map<String, Long> offsets) {
                    rewinds.add(mirror + " " + tp + " set " + new java.util.TreeMap<>(offsets));
                }
            },
            () -> imageCatchUp),
        () -> 1.0, // every retry waits the longest its backoff allows
        new PartitionRuntime.Threads(time, events, procedures, procedures, procedures));

    private PartitionFetcher fetcher(MirrorConfig config, FetchListener listener) {
        fetchListener = listener;
        if (!config.bootstrapServers().equals("source:9092")) {
            fetcherCalls.add("built for " + config.bootstrapServers());
        }
        return new PartitionFetcher() {
            @Override
            public void addPartition(TopicPartition partition, Uuid expectedSourceTopicId, long fetchOffset, int destLeaderEpoch,
                                     int lastFetchedEpoch, DestinationLogStart logStart) {
                assertEquals(SOURCE_TOPIC_ID, expectedSourceTopicId.toString());
                fetcherCalls.add("add " + partition + " from " + fetchOffset + " at epoch " + destLeaderEpoch
                    + " after source epoch " + lastFetchedEpoch);
            }

            @Override
            public void addPartitionPastLostRecords(TopicPartition partition, Uuid expectedSourceTopicId, long fromOffset,
                                                    long toOffset, int destLeaderEpoch, DestinationLogStart logStart) {
                assertEquals(SOURCE_TOPIC_ID, expectedSourceTopicId.toString());
                fetcherCalls.add("add " + partition + " past lost [" + fromOffset + ", " + toOffset + ") at epoch " + destLeaderEpoch);
            }

            @Override
            public void decideHeldLogStarts(TopicPartition partition, HeldDecision decision) {
                fetcherCalls.add(decision.verdict() + " held log starts of " + partition + " seen by " + decision.decidedMs());
            }

            @Override
            public void removePartition(TopicPartition partition) {
                fetcherCalls.add("remove " + partition);
            }

            @Override
            public void close() {
                fetcherCalls.add("close " + config.name());
            }
        };
    }

    @AfterEach
    void close() {
        if (!events.isShutdown()) {
            runtime.close();
        }
        metrics.close();
    }

    private static MirrorImage image(DesiredState desired) {
        return image(new MirrorTopicRecord(TP.topic(), "dr", desired, SOURCE_TOPIC_ID, 1, 1L));
    }

    /** A mirror "dr" whose partitions retry after {@link #BACKOFF_MS}, doubling up to 1 s, twice in a row, with this topic. */
    private static MirrorImage image(MirrorTopicRecord topic) {
        return new MirrorImage(Map.of("dr", new MirrorRecord("dr", Map.of("bootstrap.servers", "source:9092",
                MirrorConfig.PARTITION_RETRY_BACKOFF_MS, String.valueOf(BACKOFF_MS), MirrorConfig.PARTITION_RETRY_BACKOFF_MAX_MS, "1000",
                MirrorConfig.PARTITION_RETRIES, "2"), "source-cluster", 1L)),
            Map.of(TP.topic(), topic), Map.of());
    }

    /** Runs the event loop and the procedures until neither has anything due. */
    private void runAll() {
        while (events.runDue() + procedures.runDue() > 0) {
            // each round may have queued more
        }
    }

    private void lead(int epoch) {
        replica.leaderEpoch = epoch;
        replica.leader = true;
        runtime.onLeadershipChanges(List.of(new LeaderChange(TP, TOPIC_ID, true, epoch, false)));
    }

    private List<PartitionState> recordedStates() {
        return written.stream().map(PartitionStateRecord::state).toList();
    }

    private PartitionStateRecord lastRecord() {
        return written.get(written.size() - 1);
    }

    /** Leads at epoch 3 with the image loaded and mirrors from the empty log's end. */
    private void mirroring() {
        runtime.onImage(image(DesiredState.MIRRORING));
        lead(3);
        imageCatchUp.complete(null);
        runAll();
        assertEquals(List.of(PREPARING, MIRRORING), recordedStates());
        written.clear();
        fetcherCalls.clear();
    }

    @Test
    void aNewLeaderWaitsForTheImageReadBarrierThenMirrorsFromTheLogEnd() {
        runtime.onImage(image(DesiredState.MIRRORING));
        lead(3);
        runAll();
        assertEquals(List.of(), written, "nothing is decided on an image that may not hold the previous leader's state");
        assertEquals(List.of(), fetcherCalls);

        imageCatchUp.complete(null);
        runAll();

        assertEquals(List.of(PREPARING, MIRRORING), recordedStates());
        assertTrue(written.stream().allMatch(r -> r.leaderEpoch() == 3 && r.leaderId() == NODE), written.toString());
        assertEquals(List.of("add orders-0 from 0 at epoch 3 after source epoch -1"), fetcherCalls);
    }

    @Test
    void aLostLeadershipStopsFetchingAtOnce() {
        mirroring();
        imageCatchUp = new CompletableFuture<>(); // a read barrier that never completes must not hold the loss back
        replica.leader = false;

        runtime.onLeadershipChanges(List.of(new LeaderChange(TP, TOPIC_ID, false, 4, false)));
        runAll();

        assertEquals(List.of("remove orders-0"), fetcherCalls);
        assertEquals(List.of(), written, "a follower records nothing: the new leader does");
    }

    @Test
    void aStopTruncatesNothingStableWritesTheBarrierAndRecordsStoppedWithIt() {
        mirroring();
        replica.withRecords(3, 2); // mirrored from the source's epoch 2
        fetchListener.onProgress(TP, 2, 2, 0, 3);
        runAll();

        runtime.onImage(image(DesiredState.STOPPED));
        runAll();

        assertEquals(List.of("remove orders-0"), fetcherCalls, "the fetcher is gone before the stop changes the log");
        assertEquals(List.of(STOPPING, STOPPED), recordedStates());
        assertEquals(List.of("append 3", "remove producers before 3"), replica.changes);
        assertTrue(BarrierBatch.isBarrier(replica.lastBatch()));
        PartitionStateRecord stopped = lastRecord();
        assertEquals(3, stopped.barrierOffset(), "STOPPED names its barrier: the followers' hygiene learns it from the record");
        assertEquals(2, stopped.lastMirroredOffset());
        assertEquals(List.of(), rewinds, "nothing truncated: no committed offset to move");
    }

    /**
     * The cut is durable before anything is cut: were the leader to die right after its truncation, the next attempt must
     * find the cut it made, since the last stable offset it reads may have dropped (a commit marker above the cut removed).
     */
    @Test
    void aStopRecordsItsCutBeforeItTruncates() {
        mirroring();
        replica.withRecords(3, 2).withRecords(2, 2); // [3, 5) is an open transaction
        replica.lastStableOffset = 3;
        fetchListener.onProgress(TP, 4, 2, 0, 5);
        runAll();
        written.clear();
        stateLands = false;

        runtime.onImage(image(DesiredState.STOPPED));
        runAll();

        assertEquals(List.of(), replica.changes, "nothing is truncated while the record of the cut has not landed");
        PartitionStateRecord decided = lastRecord();
        assertEquals(STOPPING, decided.state());
        assertEquals(new StopCut(3, 5), decided.stopCut());
        assertEquals(3, decided.truncatedFromOffset(), "describe shows the cut from its decision on");
        assertEquals(5, decided.truncatedToOffset());

        unlanded.forEach(landing -> landing.complete(null));
        runAll();

        assertEquals(List.of("truncate 3", "append 3", "remove producers before 3"), replica.changes);
        assertEquals(STOPPED, lastRecord().state());
        assertEquals(3, lastRecord().barrierOffset());
        assertEquals(List.of(3L, 5L), List.of(lastRecord().truncatedFromOffset(), lastRecord().truncatedToOffset()));
    }

    @Test
    void aStopWhoseCutCannotBeRecordedFailsWithoutTruncating() {
        mirroring();
        replica.withRecords(3, 2).withRecords(2, 2);
        replica.lastStableOffset = 3;
        stateLands = false;

        runtime.onImage(image(DesiredState.STOPPED));
        runAll();
        unlanded.forEach(landing -> landing.completeExceptionally(new IllegalStateException("__mirror_state unavailable")));
        runAll();

        assertEquals(List.of(), replica.changes);
        assertEquals(FAILED, lastRecord().state());
        assertTrue(lastRecord().lastError().contains("could not record the cut at offset 3"), lastRecord().lastError());
    }

    /**
     * A new leader finds the stop its predecessor began, with its cut at 5 recorded, and a last stable offset of 2 (the cut
     * removed the marker of a committed transaction that began at 2): it writes the barrier at 5 and reports the first cut.
     */
    @Test
    void aNewLeaderContinuesAStopAtTheCutItsPredecessorRecorded() {
        PartitionStateRecord predecessor = new PartitionStateRecord("dr", TP.topic(), TP.partition(), STOPPING, 2, 2, SOURCE_TOPIC_ID,
            6, 2, List.of(), 7, 7, null, -1, 5, 7, time.milliseconds(), -1L, new StopCut(5, 7));
        replica.withRecords(5, 2);
        replica.lastStableOffset = 2;
        MirrorImage stopping = image(DesiredState.STOPPED);
        runtime.onImage(new MirrorImage(stopping.mirrors(), stopping.topics(), Map.of(predecessor.key(), predecessor)));
        lead(3);
        imageCatchUp.complete(null);
        runAll();

        assertEquals(List.of("append 5", "remove producers before 5"), replica.changes, "no second, lower cut");
        PartitionStateRecord stopped = lastRecord();
        assertEquals(STOPPED, stopped.state());
        assertEquals(5, stopped.barrierOffset());
        assertEquals(List.of(5L, 7L), List.of(stopped.truncatedFromOffset(), stopped.truncatedToOffset()), "the real cut, reported");
    }

    @Test
    void imagesThatArriveWhileOneWaitsAreAppliedOnceTheLatest() {
        mirroring();
        runtime.onImage(image(DesiredState.PAUSED));
        runtime.onImage(image(DesiredState.STOPPED)); // replaces the PAUSED image still waiting

        runAll();
        assertEquals(List.of(STOPPING, STOPPED), recordedStates(), "the PAUSED image was never applied");
    }

    @Test
    void sourceRecordsLostUnderTheDefaultPolicyAreSkippedAndRecordedByName() {
        mirroring();
        fetchListener.onSourceRecordsLost(TP, 7, 30);
        runAll();

        assertEquals(List.of("add orders-0 past lost [7, 30) at epoch 3"), fetcherCalls);
        assertEquals(List.of(MIRRORING), recordedStates());
        assertTrue(lastRecord().lastError().startsWith("SOURCE_RETENTION_OUTRUN: source offsets [7, 30) of orders-0"),
            lastRecord().lastError());
    }

    @Test
    void aSourceTopicGoneStopsFetchingWithoutARetry() {
        mirroring();
        fetchListener.onSourceTopicGone(TP, MirrorError.SOURCE_TOPIC_DELETED, "source topic orders was deleted");
        runAll();
        time.sleep(60_000);
        runAll();

        assertEquals(List.of("remove orders-0"), fetcherCalls, "no retry fetches again");
        assertEquals(List.of(FAILED), recordedStates());
        assertEquals("SOURCE_TOPIC_DELETED: source topic orders was deleted", lastRecord().lastError());
    }

    @Test
    void anUnavailableSourceIsRecordedUntilAFetchSucceeds() {
        mirroring();
        fetchListener.onSourceUnavailable(TP, "no fetch of orders-0 from the source succeeded for 6 s");
        runAll();
        assertEquals("SOURCE_UNAVAILABLE: no fetch of orders-0 from the source succeeded for 6 s", lastRecord().lastError());

        fetchListener.onSourceAvailable(TP);
        runAll();
        assertEquals(List.of(MIRRORING, MIRRORING), recordedStates());
        assertNull(lastRecord().lastError());
    }

    @Test
    void closingClosesTheFetchersAndDropsAPendingRetry() {
        mirroring();
        fetchListener.onFailure(TP, MirrorError.SOURCE_TOPIC_CHANGED, "the source topic was recreated");
        runAll();
        assertEquals(List.of(FAILED), recordedStates());

        runtime.close();
        time.sleep(BACKOFF_MS);
        runAll();

        assertEquals(List.of("remove orders-0", "close dr"), fetcherCalls);
        assertEquals(List.of(FAILED), recordedStates(), "the retry due after close does not run");
    }

    @Test
    void aNeverMirroredPartitionStopsWithoutBarrierOrTruncation() {
        replica.withRecords(2, 3); // the destination's own data
        runtime.onImage(image(DesiredState.STOPPED));
        lead(3);
        imageCatchUp.complete(null);
        runAll();

        assertEquals(List.of(STOPPING, STOPPED), recordedStates());
        assertEquals(-1, lastRecord().barrierOffset());
        assertEquals(List.of(), replica.changes, "its log holds only its own data");
        assertEquals(List.of(), fetcherCalls);
    }

    @Test
    void aPauseStopsFetchingAndAResumeAlignsAndFetchesAgainFromTheLogEnd() {
        mirroring();
        replica.withRecords(4, 2);
        fetchListener.onProgress(TP, 3, 2, 0, 4);

        runtime.onImage(image(DesiredState.PAUSED));
        runAll();
        assertEquals(List.of("remove orders-0"), fetcherCalls);
        assertEquals(List.of(PAUSING, PAUSED), recordedStates());

        runtime.onImage(image(DesiredState.MIRRORING));
        runAll();
        assertEquals(List.of(PAUSING, PAUSED, PREPARING, MIRRORING), recordedStates());
        assertEquals(List.of("remove orders-0", "add orders-0 from 4 at epoch 3 after source epoch 2"), fetcherCalls);
        assertEquals(List.of(), replica.changes, "a log this mirror was copying into is kept as it is");
    }

    @Test
    void aPausedPartitionsLagGrowsWithTheRecordsTheSourceTookSinceAndAResumeCatchesUp() {
        mirroring();
        sourceLog.withRecords(4, 2);
        replica.withRecords(4, 2);
        fetchListener.onProgress(TP, 3, 2, 0, 4);
        fetchListener.onOldestUnmirrored(TP, PartitionStateRecord.NOTHING_UNMIRRORED);
        runtime.onImage(image(DesiredState.PAUSED));
        runAll();
        assertEquals(0L, lagMs(), "caught up when paused");

        sourceLog.withRecords(2, 2); // offsets 4 and 5, the first written at 1000 by the producer's clock
        time.sleep(PausedPartitionProbe.INTERVAL_MS);
        runAll();
        time.sleep(PausedPartitionProbe.INTERVAL_MS);
        runAll();
        PartitionStateRecord paused = lastRecord();
        assertEquals(PAUSED, paused.state());
        assertEquals(1000L, paused.oldestUnmirroredTimestamp(), "the probe at the destination end found the first missing batch");
        assertEquals(6, paused.sourceLogEndOffset());
        assertEquals(time.milliseconds() - 1000L, lagMs());
        assertEquals(time.milliseconds() + 60_000 - 1000L, paused.lagMs(time.milliseconds() + 60_000), "it grows while paused");
        time.sleep(1_000);
        assertEquals(time.milliseconds() - 1000L, lagMs());

        runtime.onImage(image(DesiredState.MIRRORING));
        runAll();
        replica.withRecords(2, 2);
        fetchListener.onProgress(TP, 5, 2, -1, 6);
        fetchListener.onOldestUnmirrored(TP, PartitionStateRecord.NOTHING_UNMIRRORED);
        runAll();
        assertEquals(0L, lagMs(), "caught up after the resume");
        time.sleep(PausedPartitionProbe.INTERVAL_MS);
        runAll();
        assertEquals(PartitionStateRecord.NOTHING_UNMIRRORED, lastRecord().oldestUnmirroredTimestamp());
    }

    @Test
    void aMirroringPartitionThatLacksRecordsIsRecordedEveryFewSecondsAndItsGaugeGoesWithTheLeadership() {
        mirroring();
        fetchListener.onOldestUnmirrored(TP, time.milliseconds() - 200);
        runAll();
        for (int round = 1; round <= 2; round++) {
            time.sleep(PausedPartitionProbe.INTERVAL_MS);
            runAll();
            assertEquals(round, written.size(), "a new record every round, progress or not");
            assertEquals(200L + round * PausedPartitionProbe.INTERVAL_MS,
                lastRecord().lagMs(time.milliseconds() + 60_000), "the age as of the record's write");
        }
        assertEquals(200L + 2 * PausedPartitionProbe.INTERVAL_MS, lagMs());
        assertEquals(lagMs(), metricValue("lag-ms-max", Map.of("mirror", "dr")));

        replica.leader = false;
        runtime.onLeadershipChanges(List.of(new LeaderChange(TP, TOPIC_ID, false, 4, false)));
        runAll();
        assertEquals(null, metrics.metric(metrics.metricName("lag-ms", "cluster-mirror", lagTags())), "only the leader shows it");
        assertEquals(null, metrics.metric(metrics.metricName("lag-ms-max", "cluster-mirror", Map.of("mirror", "dr"))));
    }

    private static Map<String, String> lagTags() {
        return Map.of("mirror", "dr", "topic", TP.topic(), "partition", String.valueOf(TP.partition()));
    }

    private long lagMs() {
        return metricValue("lag-ms", lagTags());
    }

    private long metricValue(String name, Map<String, String> tags) {
        return ((Number) metrics.metric(metrics.metricName(name, "cluster-mirror", tags)).metricValue()).longValue();
    }

    @Test
    void newMirrorConfigsMoveTheFetchingPartitionsToNewFetchersWhereTheyWere() {
        mirroring();
        FetchListener oldListener = fetchListener;
        replica.withRecords(4, 2);
        oldListener.onProgress(TP, 3, 2, 0, 4); // reported just before the old fetcher let go

        runtime.onImage(new MirrorImage(Map.of("dr", new MirrorRecord("dr", Map.of("bootstrap.servers", "source-b:9093",
                "mirror.fetch.max.wait.ms", "200"), "source-cluster", 1L)),
            image(DesiredState.MIRRORING).topics(), Map.of()));
        runAll();

        assertEquals(List.of("remove orders-0", "close dr", "built for source-b:9093",
            "add orders-0 from 4 at epoch 3 after source epoch 2"), fetcherCalls);
        assertEquals(List.of(), replica.changes, "nothing is truncated");
        assertTrue(written.stream().noneMatch(r -> r.state() == PREPARING), "nothing is prepared again: " + written);

        oldListener.onFailure(TP, MirrorError.SOURCE_CLUSTER_UNREACHABLE, "authentication failed with the old password");
        runAll();
        assertTrue(written.stream().noneMatch(r -> r.state() == FAILED), "the replaced fetchers' failures are stale: " + written);
        fetchListener.onFailure(TP, MirrorError.SOURCE_CLUSTER_UNREACHABLE, "down");
        runAll();
        assertEquals(FAILED, lastRecord().state(), "the new fetchers' failures count");
    }

    @Test
    void aDivergenceReportedByTheFetcherIsRepairedThenMirroringGoesOnFromTheCut() {
        mirroring();
        sourceLog.withRecords(3, 2).withRecords(1, 5); // an unclean election on the source replaced [3, 5)
        replica.withRecords(3, 2).withRecords(2, 2);
        fetchListener.onProgress(TP, 4, 2, 0, 5);
        runAll();

        fetchListener.onDivergence(TP, 2, 3);
        runAll();

        assertEquals(List.of("truncate 3"), replica.changes);
        assertEquals(List.of("add orders-0 from 3 at epoch 3 after source epoch 2"), fetcherCalls,
            "the fetcher dropped the partition itself; it is handed back at the cut");
        PartitionStateRecord truncated = written.stream().filter(r -> r.truncatedFromOffset() >= 0).findFirst().orElse(null);
        assertNotNull(truncated, "the truncation is recorded: " + written);
        assertEquals(List.of(3L, 5L), List.of(truncated.truncatedFromOffset(), truncated.truncatedToOffset()));
        assertEquals(List.of("dr orders-0 3"), rewinds, "groups that committed past the cut are moved back to it");
        assertEquals(MIRRORING, lastRecord().state());
        assertEquals(2, lastRecord().lastMirroredOffset());
    }

    @Test
    void aFailedPreparationIsRetriedWithBackoffOnTheClock() {
        sourceFailures = 2;
        runtime.onImage(image(DesiredState.MIRRORING));
        lead(3);
        imageCatchUp.complete(null);
        runAll();
        assertEquals(List.of(PREPARING, FAILED), recordedStates());
        assertTrue(lastRecord().lastError().contains("source unreachable"), lastRecord().lastError());

        time.sleep(BACKOFF_MS - 1);
        runAll();
        assertEquals(2, written.size(), "not retried before its time");

        time.sleep(1);
        runAll();
        assertEquals(List.of(PREPARING, FAILED, PREPARING, FAILED), recordedStates());

        time.sleep(2 * BACKOFF_MS - 1);
        runAll();
        assertEquals(4, written.size(), "the backoff doubles");

        time.sleep(1);
        runAll();
        assertEquals(List.of(PREPARING, FAILED, PREPARING, FAILED, PREPARING, MIRRORING), recordedStates());
        assertEquals(List.of("add orders-0 from 0 at epoch 3 after source epoch -1"), fetcherCalls);

        replica.withRecords(1, 2);
        fetchListener.onProgress(TP, 0, 2, 0, 1);
        runAll();
        assertEquals(MIRRORING, lastRecord().state());
        assertEquals(null, lastRecord().lastError(), "the error is cleared once the fetcher makes progress");
    }

    @Test
    void aPartitionWhoseRetriesAreUsedUpWaitsUntilTheOperatorRecoversIt() {
        sourceFailures = 4;
        runtime.onImage(image(DesiredState.MIRRORING));
        lead(3);
        imageCatchUp.complete(null);
        runAll();
        time.sleep(BACKOFF_MS);
        runAll();
        time.sleep(2 * BACKOFF_MS);
        runAll();
        assertEquals(List.of(PREPARING, FAILED, PREPARING, FAILED, PREPARING, FAILED), recordedStates());
        assertEquals(new FailureRetries(3, FailureRetries.NONE, true), lastRecord().failureRetries(),
            "after its two retries the partition tries no more by itself");
        assertTrue(lastRecord().lastError().contains("--recover"), lastRecord().lastError());

        time.sleep(60_000);
        runAll();
        assertEquals(6, written.size(), "no retry after the last one, however long it waits");

        MirrorTopicRecord topic = new MirrorTopicRecord(TP.topic(), "dr", DesiredState.MIRRORING, SOURCE_TOPIC_ID, 1, 1L);
        runtime.onImage(image(topic.recovered(new LastCommand("recover-1", CommandOp.RECOVER, time.milliseconds(), "recovering"))));
        runAll();
        assertEquals(List.of(PREPARING, FAILED), recordedStates().subList(6, 8), "the recovery tries at once, and fails");
        assertEquals(new FailureRetries(1, time.milliseconds() + BACKOFF_MS, true), lastRecord().failureRetries(),
            "with a fresh run of retries");

        time.sleep(BACKOFF_MS);
        runAll();
        assertEquals(MIRRORING, lastRecord().state());
        assertNull(lastRecord().failureRetries());
        runtime.onImage(image(topic.recovered(new LastCommand("recover-1", CommandOp.RECOVER, time.milliseconds(), "recovering"))));
        runAll();
        assertEquals(MIRRORING, lastRecord().state(), "the same recovery seen again changes nothing");
    }

    @Test
    void onlyKafkasRetriableErrorsMeanTheSourceDidNotAnswer() {
        assertTrue(LogProcedureRunner.sourceUnreachable(new java.util.concurrent.ExecutionException(
            new org.apache.kafka.common.errors.TimeoutException("Timed out waiting for a node assignment"))));
        assertTrue(LogProcedureRunner.sourceUnreachable(new org.apache.kafka.common.errors.DisconnectException("gone")));
        assertFalse(LogProcedureRunner.sourceUnreachable(new java.util.concurrent.ExecutionException(
            new org.apache.kafka.common.errors.TopicAuthorizationException("no READ"))));
        assertFalse(LogProcedureRunner.sourceUnreachable(new IllegalStateException("a bug")));
    }

    @Test
    void theOutcomesAndEventsOfAnOldLeaderEpochAreIgnored() {
        runtime.onImage(image(DesiredState.MIRRORING));
        lead(3);
        imageCatchUp.complete(null);
        events.runDue(); // PREPARING at epoch 3; its preparation waits on the procedure thread
        assertEquals(List.of(PREPARING), recordedStates());

        lead(4);
        events.runDue(); // a new epoch: its own preparation is queued behind the old one
        runtime.onLeadershipChanges(List.of(new LeaderChange(TP, TOPIC_ID, true, 3, false))); // late, of the old epoch
        runAll();

        assertEquals(List.of("add orders-0 from 0 at epoch 4 after source epoch -1"), fetcherCalls,
            "only the current epoch fetches; the old preparation's outcome is dropped");
        assertEquals(List.of(PREPARING, PREPARING, MIRRORING), recordedStates());
        assertEquals(List.of(3, 4, 4), written.stream().map(PartitionStateRecord::leaderEpoch).toList());
    }
}
