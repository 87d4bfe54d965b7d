package io.clustermirror.broker.partition;

import org.apache.kafka.server.util.Scheduler;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A deterministic {@link Scheduler}: a task due now runs at once on the caller's thread; a periodic task runs when the test
 * calls {@link #runPeriodic}.
 */
final class DirectScheduler implements Scheduler {
    private final List<Runnable> periodic = new ArrayList<>();
    private boolean running;

    @Override
    public void startup() {
        running = true;
    }

    @Override
    public void shutdown() {
        running = false;
        periodic.clear();
    }

    @Override
    public ScheduledFuture<?> schedule(String name, Runnable task, long delayMs, long periodMs) {
        if (!running) {
            throw new IllegalStateException("not started: " + name);
        }
        if (periodMs >= 0) {
            periodic.add(task);
        } else if (delayMs == 0) {
            task.run();
        } else {
            throw new UnsupportedOperationException("delayed one-off task " + name);
        }
        return new Done();
    }

    /** Runs every periodic task once, as if their period had passed. */
    void runPeriodic() {
        List.copyOf(periodic).forEach(Runnable::run);
    }

    @Override
    public void resizeThreadPool(int newSize) {
        throw new UnsupportedOperationException("a direct scheduler has no threads");
    }

    private static final class Done extends CompletableFuture<Void> implements ScheduledFuture<Void> {
        Done() {
            complete(null);
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return 0;
        }

        @Override
        public int compareTo(Delayed other) {
            return Long.compare(0, other.getDelay(TimeUnit.MILLISECONDS));
        }
    }
}
