package io.clustermirror.broker.partition;

import io.clustermirror.broker.bridge.NotLeaderException;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Admits the log changes of one partition's current {@link MirrorPartition#generation() generation} only. The executor
 * {@link #advanceTo advances} it with every transition of the partition's state machine (never blocking); a procedure
 * changes the log only through {@link #change}, which checks its generation and makes the change under one lock.
 *
 * <p>Invariant: once the fence has advanced past generation {@code g}, no change of {@code g} starts, and a change of a
 * later generation runs only after every admitted change of {@code g} has returned. So a procedure that a stop superseded
 * never truncates or appends after the stop's truncation and barrier, even while it still runs.
 */
final class LogFence {
    private final AtomicLong generation;
    private final ReentrantLock lock = new ReentrantLock();

    LogFence(long generation) {
        this.generation = new AtomicLong(generation);
    }

    long generation() {
        return generation.get();
    }

    /** Called by the executor after each transition: work of earlier generations is refused from now on. */
    void advanceTo(long newGeneration) {
        generation.accumulateAndGet(newGeneration, Math::max);
    }

    /** Throws unless {@code procedureGeneration} is current: a superseded procedure stops before its next step. */
    void check(long procedureGeneration) throws SupersededException {
        long current = generation.get();
        if (current != procedureGeneration) {
            throw new SupersededException(procedureGeneration, current);
        }
    }

    /** Runs one change of the log for a procedure of {@code procedureGeneration}, if that generation is still current. */
    <T> T change(long procedureGeneration, LogChange<T> change) throws SupersededException, NotLeaderException {
        lock.lock();
        try {
            check(procedureGeneration);
            return change.run();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Returns once no admitted change is running: called after {@link #advanceTo}, no change of an earlier generation
     * runs after it returns. For a procedure that completes without changing the log itself.
     */
    void awaitChangesInProgress() {
        lock.lock();
        lock.unlock();
    }

    /** The right of a procedure issued in {@code generation} to change the log while that generation is current. */
    Permit permit(long procedureGeneration) {
        return new Permit(this, procedureGeneration);
    }

    record Permit(LogFence fence, long generation) {
        void check() throws SupersededException {
            fence.check(generation);
        }

        <T> T change(LogChange<T> change) throws SupersededException, NotLeaderException {
            return fence.change(generation, change);
        }
    }

    /** One truncation, append or producer-state change of the leader's log. */
    interface LogChange<T> {
        T run() throws NotLeaderException;
    }

    /** The procedure was superseded by a later one (a stop, a new leadership, ...): it must not touch the log again. */
    static final class SupersededException extends Exception {
        private static final long serialVersionUID = 1L;

        SupersededException(long procedureGeneration, long current) {
            super("superseded: issued in generation " + procedureGeneration + ", now " + current);
        }
    }
}
