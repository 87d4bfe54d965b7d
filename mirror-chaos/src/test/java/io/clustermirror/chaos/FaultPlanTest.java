package io.clustermirror.chaos;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FaultPlanTest {
    @Test
    void theSameSeedGivesTheSamePlan() {
        assertEquals(FaultPlan.plan(42, Duration.ofMinutes(10), 1, false), FaultPlan.plan(42, Duration.ofMinutes(10), 1, false));
        assertNotEquals(FaultPlan.plan(42, Duration.ofMinutes(10), 1, false), FaultPlan.plan(43, Duration.ofMinutes(10), 1, false));
    }

    @Test
    void nearbySeedsGiveDifferentPlans() {
        long distinctFirstFaults = java.util.stream.LongStream.rangeClosed(1, 10)
            .mapToObj(seed -> FaultPlan.plan(seed, Duration.ofMinutes(2), 1, false).get(1)).distinct().count();
        assertTrue(distinctFirstFaults >= 8, "seeds 1 to 10 give " + distinctFirstFaults + " different second faults");
    }

    @Test
    void noOperatorStepInThePlanAndTheCorruptionOnlyWhenAskedFor() {
        for (long seed = 0; seed < 50; seed++) {
            Duration duration = Duration.ofMinutes(2);
            List<FaultPlan.Fault> plan = FaultPlan.plan(seed, duration, 1, false);
            assertTrue(plan.stream().allMatch(f -> f.kind().random), "failovers are the cycles' own, not the plan's: " + plan);
            assertEquals(1, FaultPlan.plan(seed, duration, 1, true).stream().filter(f -> f.kind() == FaultKind.CORRUPT_REPLICA_BYTE).count());
            for (int i = 0; i < plan.size(); i++) {
                assertEquals(i + 1, plan.get(i).index());
                assertTrue(i == 0 || plan.get(i - 1).atMs() <= plan.get(i).atMs(), "faults in time order");
            }
        }
    }

    @Test
    void theCyclesDrawTheirPausesFromTheSeed() {
        FailoverCycles a = new FailoverCycles(7);
        FailoverCycles b = new FailoverCycles(7);
        FailoverCycles other = new FailoverCycles(8);
        List<Long> pauses = java.util.stream.IntStream.range(0, 100).mapToObj(i -> a.nextPauseMs()).toList();
        assertEquals(pauses, java.util.stream.IntStream.range(0, 100).mapToObj(i -> b.nextPauseMs()).toList());
        assertNotEquals(pauses, java.util.stream.IntStream.range(0, 100).mapToObj(i -> other.nextPauseMs()).toList());
        assertTrue(pauses.stream().allMatch(p -> p >= FailoverCycles.MIN_PAUSE_MS && p < FailoverCycles.MAX_PAUSE_MS), pauses.toString());
        // Four steps of a cycle with their pauses leave room for 100 cycles in 30 minutes if each command takes a few seconds.
        assertTrue(pauses.stream().mapToLong(Long::longValue).average().orElseThrow() * 4 < 18_000);
    }

    @Test
    void faultsOnTheSourceBrokersOnlyWithThreeOfThem() {
        for (long seed = 0; seed < 20; seed++) {
            assertTrue(FaultPlan.plan(seed, Duration.ofMinutes(10), 1, false).stream().noneMatch(f -> f.kind().threeSourceBrokers));
        }
        List<FaultKind> drawn = java.util.stream.LongStream.range(0, 20)
            .mapToObj(seed -> FaultPlan.plan(seed, Duration.ofMinutes(10), 3, false)).flatMap(List::stream).map(FaultPlan.Fault::kind).toList();
        assertTrue(drawn.contains(FaultKind.SOURCE_KILL_LEADER) && drawn.contains(FaultKind.SOURCE_UNCLEAN_ELECTION), drawn.toString());
    }

    @Test
    void everyRandomKindIsDrawnWithAThreeBrokerSource() {
        List<FaultKind> drawn = java.util.stream.LongStream.range(0, 20)
            .mapToObj(seed -> FaultPlan.plan(seed, Duration.ofMinutes(10), 3, false)).flatMap(List::stream).map(FaultPlan.Fault::kind).toList();
        List<FaultKind> missing = java.util.Arrays.stream(FaultKind.values()).filter(k -> k.random && !drawn.contains(k)).toList();
        assertTrue(missing.isEmpty(), "never drawn: " + missing);
    }

    @Test
    void aboutAThirdOfTheStopsArePlannedAsTheSeedDecides() {
        FailoverCycles a = new FailoverCycles(7);
        FailoverCycles b = new FailoverCycles(7);
        List<Boolean> planned = java.util.stream.IntStream.range(0, 300).mapToObj(i -> a.nextStopPlanned()).toList();
        assertEquals(planned, java.util.stream.IntStream.range(0, 300).mapToObj(i -> b.nextStopPlanned()).toList());
        long count = planned.stream().filter(p -> p).count();
        assertTrue(count > 60 && count < 140, count + " of 300 stops planned");
    }

    @Test
    void theFirstStopComesUnderFireAndAboutAThirdOfTheRestAsTheSeedDecides() {
        FailoverCycles a = new FailoverCycles(7);
        FailoverCycles b = new FailoverCycles(7);
        assertTrue(a.nextStopUnderFire(true).isPresent(), "a run's first stop always comes under fire: CI's short run has one");
        b.nextStopUnderFire(true);
        List<Optional<FailoverCycles.UnderFire>> drawn = java.util.stream.IntStream.range(0, 300).mapToObj(i -> a.nextStopUnderFire(false))
            .toList();
        assertEquals(drawn, java.util.stream.IntStream.range(0, 300).mapToObj(i -> b.nextStopUnderFire(false)).toList(), "replayable");
        long count = drawn.stream().filter(Optional::isPresent).count();
        assertTrue(count > 60 && count < 140, count + " of 300 stops under fire");
        assertTrue(drawn.stream().flatMap(Optional::stream).allMatch(f -> f.partition() >= 0 && f.partition() < ChaosRun.FAILOVER_PARTITIONS
            && f.afterMs() >= 200 && f.afterMs() < 2_000 && f.downMs() >= 1_000 && f.downMs() < 5_000), drawn.toString());
    }

    @Test
    void aStepReportsOnlyTheCutItMade() {
        // Describe still shows the last start's cut [2446, 2654) after a stop that wrote its barrier at 3367 and cut nothing.
        assertEquals(new FailoverCycles.PartitionCut(0, 3367, -1, -1), FailoverCycles.PartitionCut.reported(0, true, 3367, 2446, 2654, 2446));
        assertEquals(new FailoverCycles.PartitionCut(0, 3367, 3367, 3400), FailoverCycles.PartitionCut.reported(0, true, 3367, 3367, 3400, 2446));
        // A stop that wrote two aborts again at its cut 3367 has its barrier at 3369, inside the range it removed; the copy
        // of the source ends at the cut.
        FailoverCycles.PartitionCut rewritten = FailoverCycles.PartitionCut.reported(0, true, 3369, 3367, 3400, 2446);
        assertEquals(new FailoverCycles.PartitionCut(0, 3369, 3367, 3400), rewritten);
        assertEquals(3367, rewritten.mirroredEnd());
        assertEquals(3367, FailoverCycles.PartitionCut.reported(0, true, 3367, 2446, 2654, 2446).mirroredEnd(), "no cut: the barrier");
        // A start cuts at the barrier it aligns to, or nothing.
        assertEquals(new FailoverCycles.PartitionCut(1, -1, 700, 919), FailoverCycles.PartitionCut.reported(1, false, 700, 700, 919, 700));
        assertEquals(new FailoverCycles.PartitionCut(1, -1, -1, -1), FailoverCycles.PartitionCut.reported(1, false, 700, 600, 650, 700));
    }
}
