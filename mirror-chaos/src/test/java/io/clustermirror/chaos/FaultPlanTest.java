package io.clustermirror.chaos;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

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
    void nearbySeedsGiveDifferentTimes() {
        long distinctStopTimes = java.util.stream.LongStream.rangeClosed(1, 10)
            .map(seed -> FaultPlan.plan(seed, Duration.ofMinutes(2), 1, false).stream().filter(f -> f.kind() == FaultKind.STOP).findFirst()
                .orElseThrow().atMs() / 1000)
            .distinct().count();
        assertTrue(distinctStopTimes >= 8, "seeds 1 to 10 stop at " + distinctStopTimes + " different seconds");
    }

    @Test
    void oneStopInTheMiddleThenOneFailbackAndTheCorruptionOnlyWhenAskedFor() {
        for (long seed = 0; seed < 50; seed++) {
            Duration duration = Duration.ofMinutes(2);
            List<FaultPlan.Fault> plan = FaultPlan.plan(seed, duration, 1, false);
            List<FaultPlan.Fault> stops = plan.stream().filter(f -> f.kind() == FaultKind.STOP).toList();
            assertEquals(1, stops.size(), "one stop per run");
            assertTrue(stops.get(0).atMs() >= duration.toMillis() * 0.3 && stops.get(0).atMs() <= duration.toMillis() * 0.7, stops.toString());
            List<FaultPlan.Fault> failbacks = plan.stream().filter(f -> f.kind() == FaultKind.FAILBACK).toList();
            assertEquals(1, failbacks.size(), "one failback per run");
            assertTrue(failbacks.get(0).atMs() > stops.get(0).atMs() && failbacks.get(0).atMs() < duration.toMillis(), plan.toString());
            assertTrue(plan.stream().noneMatch(f -> f.kind() == FaultKind.CORRUPT_REPLICA_BYTE));
            assertEquals(1, FaultPlan.plan(seed, duration, 1, true).stream().filter(f -> f.kind() == FaultKind.CORRUPT_REPLICA_BYTE).count());
            for (int i = 0; i < plan.size(); i++) {
                assertEquals(i + 1, plan.get(i).index());
                assertTrue(i == 0 || plan.get(i - 1).atMs() <= plan.get(i).atMs(), "faults in time order");
            }
        }
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
}
