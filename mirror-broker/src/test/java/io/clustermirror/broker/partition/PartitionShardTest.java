package io.clustermirror.broker.partition;

import io.clustermirror.broker.bridge.LeaderChange;
import io.clustermirror.broker.bridge.LeaderLogState;
import io.clustermirror.broker.fetch.ClusterLogReader;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.EpochStart;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.StopCut;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shard's decisions, with no runtime: what each input returns, on mock time and an in-memory view of the local leader
 * logs. The runtime's scenarios ({@link PartitionRuntimeTest}) check that these effects, performed, do what they say.
 */
class PartitionShardTest {
    private static final TopicPartition TP = new TopicPartition("orders", 0);
    private static final Uuid TOPIC_ID = Uuid.fromString("a1b2c3d4e5f6a7b8c9d0eA");
    private static final String SOURCE_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAA";
    private static final int EPOCH = 3;

    private final MockTime time = new MockTime(0, 1_700_000_000_000L, 0);
    private final Map<TopicPartition, LeaderLogState> logs = new HashMap<>();
    private final PartitionShard shard = new PartitionShard(1, time, tp -> Optional.ofNullable(logs.get(tp)), () -> 1.0);

    private static MirrorImage image(DesiredState desired, Map<String, String> configs) {
        return new MirrorImage(Map.of("dr", new MirrorRecord("dr", configs, "source-cluster", 1L)),
            Map.of(TP.topic(), new MirrorTopicRecord(TP.topic(), "dr", desired, SOURCE_TOPIC_ID, 1, 1L)), Map.of());
    }

    private static MirrorImage image(DesiredState desired) {
        return image(desired, Map.of("bootstrap.servers", "source:9092"));
    }

    private void logEndsAt(long end) {
        logs.put(TP, new LeaderLogState(EPOCH, 0, end, end, end));
    }

    private static <T extends PartitionEffect> List<T> all(List<PartitionEffect> effects, Class<T> type) {
        return effects.stream().filter(type::isInstance).map(type::cast).toList();
    }

    private static <T extends PartitionEffect> T only(List<PartitionEffect> effects, Class<T> type) {
        List<T> found = all(effects, type);
        assertEquals(1, found.size(), type.getSimpleName() + " in " + effects);
        return found.get(0);
    }

    private static List<PartitionState> recorded(List<PartitionEffect> effects) {
        return all(effects, PartitionEffect.WriteState.class).stream().map(w -> w.record().state()).toList();
    }

    /** Leads at {@link #EPOCH} and returns the preparation it asks for. */
    private PartitionEffect.Prepare leadAndPrepare(long logEnd) {
        logEndsAt(logEnd);
        shard.imageLoaded(image(DesiredState.MIRRORING));
        return only(shard.leadershipGained(new LeaderChange(TP, TOPIC_ID, true, EPOCH, false)), PartitionEffect.Prepare.class);
    }

    /** Leads, prepares without cutting, and returns the effects of entering MIRRORING. */
    private List<PartitionEffect> mirroring(long logEnd) {
        PartitionEffect.Prepare prepare = leadAndPrepare(logEnd);
        long generation = prepare.partition().generation();
        return shard.prepared(TP, generation, null, new PartitionEvent.PrepareSucceeded(generation));
    }

    private MirrorPartition partition() {
        return shard.partition(TP).orElseThrow();
    }

    @Test
    void eachProcedureIsIssuedAfterTheFenceAdvancedToItsGeneration() {
        logEndsAt(0);
        shard.imageLoaded(image(DesiredState.MIRRORING));
        List<PartitionEffect> effects = shard.leadershipGained(new LeaderChange(TP, TOPIC_ID, true, EPOCH, false));

        PartitionEffect.Prepare prepare = only(effects, PartitionEffect.Prepare.class);
        int fenceAt = effects.indexOf(new PartitionEffect.AdvanceFence(TP, prepare.partition().generation()));
        assertTrue(fenceAt >= 0 && fenceAt < effects.indexOf(prepare), "the fence admits the procedure's generation first: " + effects);
        assertEquals(List.of(PartitionState.PREPARING), recorded(effects));
    }

    @Test
    void mirroringStartsAtTheLogEndWithTheLeaderEpochAndAFetchThatCompletesAtOnce() {
        List<PartitionEffect> effects = mirroring(7);

        PartitionEffect.AddToFetcher add = only(effects, PartitionEffect.AddToFetcher.class);
        assertEquals(List.of(7L, (long) EPOCH, -1L), List.of(add.fetchOffset(), (long) add.leaderEpoch(), (long) add.lastFetchedEpoch()));
        assertEquals(List.of(PartitionState.MIRRORING), recorded(effects));
        assertTrue(partition().mirroredInto(), "the fetch counts as started before any other input: a stop must truncate");
    }

    @Test
    void aLeadershipThatMovedOnGetsNoFetcher() {
        PartitionEffect.Prepare prepare = leadAndPrepare(0);
        logs.put(TP, new LeaderLogState(EPOCH + 1, 0, 0, 0, 0)); // a newer epoch the shard has not heard of yet

        List<PartitionEffect> effects = shard.prepared(TP, prepare.partition().generation(), null,
            new PartitionEvent.PrepareSucceeded(prepare.partition().generation()));

        assertEquals(List.of(), all(effects, PartitionEffect.AddToFetcher.class));
    }

    @Test
    void anOutcomeOfAnEarlierGenerationChangesNothing() {
        PartitionEffect.Prepare prepare = leadAndPrepare(0);
        long stale = prepare.partition().generation() - 1;

        assertEquals(List.of(), shard.prepared(TP, stale, null, new PartitionEvent.PrepareSucceeded(stale)));
        assertEquals(List.of(), shard.stopped(TP, stale, new LeaderLogProcedures.Outcome(5, -1, -1), new PartitionEvent.StopSucceeded(stale)));
        assertEquals(PartitionState.PREPARING, partition().state());
    }

    @Test
    void aSourceThatCopiesTheTopicFromUsFailsThePreparationNamingItsMirror() {
        PartitionEffect.Prepare prepare = leadAndPrepare(0);

        List<PartitionEffect> effects = shard.refusedAsLoop(TP, prepare.partition().generation(), "back");

        PartitionStateRecord failed = only(effects, PartitionEffect.WriteState.class).record();
        assertEquals(PartitionState.FAILED, failed.state());
        assertTrue(failed.lastError().startsWith("MIRROR_LOOP: the source cluster copies orders from this cluster (its mirror 'back')"),
            failed.lastError());
        assertEquals(List.of(), all(effects, PartitionEffect.AddToFetcher.class));
    }

    @Test
    void aLogFoundIdenticalToTheSourceToItsEndContinuesAfterTheSourceEpochThere() {
        PartitionEffect.Prepare prepare = leadAndPrepare(10);
        long generation = prepare.partition().generation();

        List<PartitionEffect> effects = shard.prepared(TP, generation, new LeaderLogProcedures.Aligned(10, 10, 4),
            new PartitionEvent.PrepareSucceeded(generation));

        assertEquals(4, only(effects, PartitionEffect.AddToFetcher.class).lastFetchedEpoch());
        assertEquals(9, only(effects, PartitionEffect.WriteState.class).record().lastMirroredOffset());
    }

    @Test
    void aRepairContinuesAfterTheEpochItsCutProves() {
        assertEquals(2, lastFetchedEpochAfterRepair(new LeaderLogProcedures.Aligned(3, -1, -1)), "the source's epoch lineage decided");
        assertEquals(1, lastFetchedEpochAfterRepair(new LeaderLogProcedures.Aligned(3, 3, 1)), "the batches proved the log to its end");
        assertEquals(-1, lastFetchedEpochAfterRepair(new LeaderLogProcedures.Aligned(3, 2, 1)), "unproven batches remain at the end");
    }

    /** Mirrors [0, 5) from source epochs 1 and 2 (from 3), diverges at epoch 2, and repairs to {@code aligned}. */
    private int lastFetchedEpochAfterRepair(LeaderLogProcedures.Aligned aligned) {
        PartitionShard fresh = new PartitionShard(1, time, tp -> Optional.ofNullable(logs.get(tp)), () -> 1.0);
        logEndsAt(5);
        fresh.imageLoaded(image(DesiredState.MIRRORING));
        PartitionEffect.Prepare prepare = only(fresh.leadershipGained(new LeaderChange(TP, TOPIC_ID, true, EPOCH, false)),
            PartitionEffect.Prepare.class);
        fresh.prepared(TP, prepare.partition().generation(), null, new PartitionEvent.PrepareSucceeded(prepare.partition().generation()));
        fresh.mirrored(TP, 2, 1, 0, 5);
        fresh.mirrored(TP, 4, 2, 3, 5);
        PartitionEffect.RepairDivergence repair = only(fresh.handle(TP, new PartitionEvent.SourceDiverged(2, 3)),
            PartitionEffect.RepairDivergence.class);
        logEndsAt(aligned.logEnd());
        long generation = repair.partition().generation();
        List<PartitionEffect> effects = fresh.repaired(TP, generation, 2, aligned, new PartitionEvent.RepairSucceeded(generation));
        PartitionStateRecord record = only(effects, PartitionEffect.WriteState.class).record();
        assertEquals(List.of(new EpochStart(1, 0)), record.sourceEpochs(), "no lineage past the cut");
        assertEquals(2, record.lastMirroredOffset());
        return only(effects, PartitionEffect.AddToFetcher.class).lastFetchedEpoch();
    }

    @Test
    void newConfigsTakeTheFetchingPartitionsFromTheOldFetchersThenStartThemOnNewOnesWithoutPreparing() {
        mirroring(4);
        shard.mirrored(TP, 3, 2, 0, 4);
        MirrorPartition before = partition();

        List<PartitionEffect> altered = shard.imageLoaded(image(DesiredState.MIRRORING, Map.of("bootstrap.servers", "source-b:9093")));
        assertEquals(new PartitionEffect.ReplaceFetchers("dr", List.of(before)), only(altered, PartitionEffect.ReplaceFetchers.class));

        List<PartitionEffect> replaced = shard.fetchersReplaced(List.of(before));
        PartitionEffect.AddToFetcher add = only(replaced, PartitionEffect.AddToFetcher.class);
        assertEquals("source-b:9093", add.config().bootstrapServers());
        assertEquals(List.of(4L, 2L), List.of(add.fetchOffset(), (long) add.lastFetchedEpoch()));
        assertEquals(List.of(), all(replaced, PartitionEffect.Prepare.class));
        assertEquals(PartitionState.MIRRORING, partition().state());
    }

    @Test
    void aPartitionThatLeftItsLeaderEpochIsNotMovedToTheNewFetchers() {
        mirroring(0);
        MirrorPartition before = partition();
        shard.imageLoaded(image(DesiredState.MIRRORING, Map.of("bootstrap.servers", "source-b:9093")));
        logs.put(TP, new LeaderLogState(EPOCH + 1, 0, 0, 0, 0));
        shard.leadershipGained(new LeaderChange(TP, TOPIC_ID, true, EPOCH + 1, false));

        assertEquals(List.of(), all(shard.fetchersReplaced(List.of(before)), PartitionEffect.AddToFetcher.class),
            "the new leadership starts its own fetch");
    }

    @Test
    void aDeletedMirrorsFetchersCloseAndItsPartitionsLeave() {
        mirroring(0);

        List<PartitionEffect> effects = shard.imageLoaded(MirrorImage.EMPTY);

        assertTrue(effects.contains(new PartitionEffect.CloseFetchers("dr")), effects.toString());
        assertTrue(effects.contains(new PartitionEffect.RemoveFromFetcher("dr", TP)), effects.toString());
        assertTrue(effects.contains(new PartitionEffect.UntrackLag(TP)), effects.toString());
        assertFalse(shard.partition(TP).isPresent());
    }

    @Test
    void aStopCutIsRecordedWithTheStopsCompletionAndShownAsTruncatedFromItsDecision() {
        mirroring(5);
        PartitionEffect.RunStop stop = only(shard.imageLoaded(image(DesiredState.STOPPED)), PartitionEffect.RunStop.class);
        assertEquals(Optional.empty(), stop.decided());

        List<PartitionEffect> effects = shard.stopCutDecided(TP, stop.partition().generation(), new StopCut(3, 5), "source-cluster");

        PartitionEffect.CompleteStopOnceRecorded complete = only(effects, PartitionEffect.CompleteStopOnceRecorded.class);
        assertEquals(new StopCut(3, 5), complete.record().record().stopCut());
        assertEquals(List.of(3L, 5L), List.of(complete.record().record().truncatedFromOffset(), complete.record().record().truncatedToOffset()));
        assertEquals(List.of(), shard.stopCutDecided(TP, stop.partition().generation() - 1, new StopCut(3, 5), "source-cluster"),
            "a superseded stop records nothing");
    }

    @Test
    void aCompletedStopCleansTheProducerStateBeforeItRecordsStopped() {
        mirroring(5);
        PartitionEffect.RunStop stop = only(shard.imageLoaded(image(DesiredState.STOPPED)), PartitionEffect.RunStop.class);
        long generation = stop.partition().generation();

        List<PartitionEffect> effects = shard.stopped(TP, generation, new LeaderLogProcedures.Outcome(5, -1, -1),
            new PartitionEvent.StopSucceeded(generation));

        int clean = effects.indexOf(new PartitionEffect.MarkProducerStateClean(TP, EPOCH));
        PartitionEffect.WriteState stopped = only(effects, PartitionEffect.WriteState.class);
        assertEquals(PartitionState.STOPPED, stopped.record().state());
        assertEquals(5, stopped.record().barrierOffset());
        assertTrue(clean >= 0 && clean < effects.indexOf(stopped), "clients may write once STOPPED is read: " + effects);
        assertTrue(effects.contains(new PartitionEffect.UntrackLag(TP)), "a stopped partition has no lag");
    }

    @Test
    void theSnapshotRecordsWhatChangedAndTheMirroringPartitionsThatLackRecords() {
        mirroring(0);
        assertEquals(List.of(), shard.snapshotDue(), "nothing changed since MIRRORING was recorded");

        logEndsAt(3);
        shard.mirrored(TP, 2, 1, 0, 3);
        assertEquals(List.of(PartitionState.MIRRORING), recorded(shard.snapshotDue()));
        assertEquals(List.of(), shard.snapshotDue());

        shard.oldestUnmirroredSeen(TP, time.milliseconds() - 100);
        assertEquals(List.of(PartitionState.MIRRORING), recorded(shard.snapshotDue()));
        assertEquals(List.of(PartitionState.MIRRORING), recorded(shard.snapshotDue()), "its lag grows: recorded every round");
    }

    @Test
    void aProbeAppliesOnlyToAPartitionStillPausedAtTheEndItProbed() {
        mirroring(4);
        shard.imageLoaded(image(DesiredState.PAUSED));
        shard.handle(TP, new PartitionEvent.FetcherStopped()); // the pause completes as the runtime's removal reports
        assertEquals(PartitionState.PAUSED, partition().state());
        Map<String, Map<TopicPartition, Long>> ends = shard.pausedLogEnds();
        assertEquals(Map.of("dr", Map.of(TP, 4L)), ends);
        Map<TopicPartition, ClusterLogReader.Head> heads = Map.of(TP, new ClusterLogReader.Head(9, Optional.empty()));

        logEndsAt(5); // the end moved since the probe read: its result no longer applies
        assertEquals(List.of(), shard.probed(ends, heads));

        logEndsAt(4);
        List<PartitionEffect> effects = shard.probed(ends, heads);
        assertEquals("dr", only(effects, PartitionEffect.TrackLag.class).mirror(), "the source moved on since the pause: " + effects);
        assertEquals(9, only(shard.snapshotDue(), PartitionEffect.WriteState.class).record().sourceLogEndOffset());
    }

    /**
     * A seeded random walk of fetch progress, divergences and their repairs, truncations and snapshots: after every step no
     * record names a lineage entry or a last mirrored offset at or past the log end, and every fetch continues after an
     * epoch the lineage holds below its fetch offset (or an unknown one).
     */
    @Test
    void theLineageNeverNamesAnOffsetOrEpochPastTheLogEnd() {
        for (long seed = 0; seed < 200; seed++) {
            walk(new Random(seed), seed);
        }
    }

    private void walk(Random random, long seed) {
        PartitionShard walked = new PartitionShard(1, time, tp -> Optional.ofNullable(logs.get(tp)), () -> 1.0);
        logEndsAt(0);
        walked.imageLoaded(image(DesiredState.MIRRORING, Map.of("bootstrap.servers", "source:9092",
            MirrorConfig.PARTITION_RETRY_BACKOFF_MS, "1")));
        List<PartitionEffect> effects = new ArrayList<>(walked.leadershipGained(new LeaderChange(TP, TOPIC_ID, true, EPOCH, false)));
        long logEnd = 0;
        int sourceEpoch = 1;
        for (int step = 0; step < 40; step++) {
            MirrorPartition p = walked.partition(TP).orElseThrow();
            List<PartitionEffect> next = new ArrayList<>();
            PartitionEffect.Prepare prepare = all(effects, PartitionEffect.Prepare.class).stream().findFirst().orElse(null);
            PartitionEffect.RepairDivergence repair = all(effects, PartitionEffect.RepairDivergence.class).stream().findFirst().orElse(null);
            if (prepare != null) {
                long g = prepare.partition().generation();
                next.addAll(walked.prepared(TP, g, null, new PartitionEvent.PrepareSucceeded(g)));
            } else if (repair != null) {
                long cut = Math.min(logEnd, repair.sourceEpochEndOffset());
                logEnd = cut;
                logEndsAt(logEnd);
                long identical = random.nextInt(3) == 0 ? -1 : random.nextBoolean() ? cut : Math.max(0, cut - 1);
                long g = repair.partition().generation();
                next.addAll(walked.repaired(TP, g, repair.sourceEpoch(), new LeaderLogProcedures.Aligned(cut, identical, sourceEpoch),
                    new PartitionEvent.RepairSucceeded(g)));
            } else if (p.state() == PartitionState.MIRRORING && random.nextInt(4) > 0) {
                int added = 1 + random.nextInt(5);
                boolean newEpoch = random.nextInt(4) == 0;
                sourceEpoch += newEpoch ? 1 : 0;
                long start = logEnd;
                logEnd += added;
                logEndsAt(logEnd);
                next.addAll(walked.mirrored(TP, logEnd - 1, sourceEpoch, newEpoch || start == 0 ? start : -1, logEnd + 10));
            } else if (p.state() == PartitionState.MIRRORING && logEnd > 0) {
                long end = random.nextInt((int) logEnd);
                next.addAll(walked.handle(TP, new PartitionEvent.SourceDiverged(sourceEpoch, end)));
            } else {
                time.sleep(10);
                next.addAll(walked.retryDue(TP));
            }
            next.addAll(walked.snapshotDue());
            for (PartitionEffect.WriteState write : all(next, PartitionEffect.WriteState.class)) {
                PartitionStateRecord r = write.record();
                long end = logEnd;
                assertTrue(r.lastMirroredOffset() < end, "seed " + seed + " step " + step + ": " + r);
                assertTrue(r.sourceEpochs().stream().allMatch(e -> e.startOffset() < end), "seed " + seed + " step " + step + ": " + r);
            }
            for (PartitionEffect.AddToFetcher add : all(next, PartitionEffect.AddToFetcher.class)) {
                assertEquals(logEnd, add.fetchOffset(), "seed " + seed);
                assertTrue(add.lastFetchedEpoch() <= sourceEpoch, "seed " + seed + " step " + step + ": " + add);
            }
            effects = next;
        }
    }
}
