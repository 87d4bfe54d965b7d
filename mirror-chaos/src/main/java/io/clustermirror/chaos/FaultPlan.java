package io.clustermirror.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;

/**
 * The seeded schedule of a run: which faults, when, for how long, against which target. The same seed and duration
 * always give the same plan; the runner resolves a {@link Fault#pick()} to a node or partition when it applies the
 * fault (which broker leads a partition then depends on the run), and records what it chose.
 *
 * <p>Faults are applied one after the other: each is healed (a stopped node is running and ready again and every
 * destination partition has all its replicas in sync, the proxy passes) before the next starts, so at most one
 * destination broker is down at a time and the cluster keeps its {@code min.insync.replicas}. A fault starts at its
 * planned time or, if the one before overran, right after it; random ones not started when the duration is over are left out
 * (an injected fault never is).
 */
final class FaultPlan {
    /** The first fault comes after the mirror had time to start copying. */
    private static final long FIRST_FAULT_MS = 10_000;

    /**
     * One planned fault.
     *
     * @param index      position in the plan, from 1
     * @param atMs       planned start, in milliseconds since the mirror's start
     * @param kind       what
     * @param durationMs how long the fault lasts before it is healed (0 for instant ones)
     * @param delayMs    the one-way delay of {@link FaultKind#PROXY_DELAY}, else 0
     * @param pick       a seeded draw that selects the target (a partition, then a replica) when the fault is applied
     */
    record Fault(int index, long atMs, FaultKind kind, long durationMs, long delayMs, int pick) {
    }

    private FaultPlan() {
    }

    /**
     * The plan for a run of {@code duration} (the time faults are applied) on a source of {@code sourceBrokers}: the
     * faults on the source's brokers are drawn only with three of them.
     */
    static List<Fault> plan(long seed, Duration duration, int sourceBrokers, boolean injectCorruption) {
        // java.util.Random's first draws from nearby seeds are nearly equal (seeds 1, 2, 3 would all stop at the same
        // time): the seed is mixed first.
        Random random = new Random(new SplittableRandom(seed).nextLong());
        long end = duration.toMillis();
        List<FaultKind> kinds = Arrays.stream(FaultKind.values()).filter(k -> k.random && (!k.threeSourceBrokers || sourceBrokers == 3)).toList();
        List<Fault> faults = new ArrayList<>();
        // The corruption is drawn first, so that its time does not depend on the other draws. Failovers and failbacks
        // are not faults of the plan: FailoverCycles runs them on a thread of its own, among these faults.
        if (injectCorruption) {
            long corruptAt = (long) (end * (0.2 + 0.4 * random.nextDouble()));
            faults.add(new Fault(0, corruptAt, FaultKind.CORRUPT_REPLICA_BYTE, 0, 0, random.nextInt(Integer.MAX_VALUE)));
        }
        long at = FIRST_FAULT_MS;
        while (at < end) {
            FaultKind kind = kinds.get(random.nextInt(kinds.size()));
            long lasts = switch (kind) {
                case KILL_LEADER, KILL_FOLLOWER, TERM_LEADER, TERM_FOLLOWER, KILL_MIRROR_CONTROLLER, KILL_KRAFT_CONTROLLER, KILL_DESTINATION,
                    SOURCE_KILL_LEADER -> between(random, 3_000, 15_000);
                case PROXY_STALL -> between(random, 5_000, 30_000);
                case PROXY_DELAY, PROXY_THROTTLE -> between(random, 5_000, 20_000);
                case PAUSE_RESUME, SOURCE_UNCLEAN_ELECTION, CORRUPT_FETCH -> between(random, 3_000, 10_000);
                default -> 0;
            };
            long delay = kind == FaultKind.PROXY_DELAY ? between(random, 50, 500) : 0;
            faults.add(new Fault(0, at, kind, lasts, delay, random.nextInt(Integer.MAX_VALUE)));
            at += lasts + between(random, 2_000, 10_000);
        }
        faults.sort(Comparator.comparingLong(Fault::atMs));
        List<Fault> numbered = new ArrayList<>();
        for (Fault f : faults) {
            numbered.add(new Fault(numbered.size() + 1, f.atMs(), f.kind(), f.durationMs(), f.delayMs(), f.pick()));
        }
        return List.copyOf(numbered);
    }

    private static long between(Random random, long min, long max) {
        return min + (long) (random.nextDouble() * (max - min));
    }

    /** The plan as a fixed-width table, one fault a line. */
    static String table(List<Fault> faults) {
        StringBuilder out = new StringBuilder(String.format("%3s %9s %-24s %9s %s%n", "#", "at (s)", "fault", "for (s)", "pick"));
        for (Fault f : faults) {
            out.append(String.format("%3d %9.1f %-24s %9.1f %d%s%n", f.index(), f.atMs() / 1000.0, f.kind(), f.durationMs() / 1000.0, f.pick(),
                f.delayMs() > 0 ? " (delay " + f.delayMs() + " ms)" : ""));
        }
        return out.toString();
    }
}
