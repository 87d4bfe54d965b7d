package io.clustermirror.broker.partition;

import org.apache.kafka.common.utils.Time;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Delayed;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A single-threaded executor the test steps: tasks run on the test's thread, only in {@link #runDue}, in the order a
 * one-thread {@link java.util.concurrent.ScheduledThreadPoolExecutor} runs them (due time, then submission), on the
 * test's (mock) clock.
 */
final class ManualExecutor extends AbstractExecutorService implements ScheduledExecutorService {
    private final Time time;
    private final PriorityQueue<Task> queue = new PriorityQueue<>(Comparator.comparingLong((Task t) -> t.dueMs).thenComparingLong(t -> t.seq));
    private long nextSeq;
    private boolean shutdown;

    ManualExecutor(Time time) {
        this.time = time;
    }

    /** Runs every task due by now, including those they submit that are due, in order; returns how many ran. */
    int runDue() {
        int ran = 0;
        while (!queue.isEmpty() && queue.peek().dueMs <= time.milliseconds()) {
            Task task = queue.poll();
            if (task.isCancelled()) {
                continue;
            }
            task.work.run();
            ran++;
            if (task.periodMs > 0 && !shutdown) {
                task.dueMs = time.milliseconds() + task.periodMs;
                queue.add(task);
            }
        }
        return ran;
    }

    private Task add(Runnable work, long delayMs, long periodMs) {
        if (shutdown) {
            throw new RejectedExecutionException("shut down");
        }
        Task task = new Task(work, time.milliseconds() + Math.max(0, delayMs), nextSeq++, periodMs);
        queue.add(task);
        return task;
    }

    @Override
    public void execute(Runnable command) {
        add(command, 0, 0);
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        return add(command, unit.toMillis(delay), 0);
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        throw new UnsupportedOperationException("callables");
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        return add(command, unit.toMillis(initialDelay), unit.toMillis(period));
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        return add(command, unit.toMillis(initialDelay), unit.toMillis(delay));
    }

    @Override
    public void shutdown() {
        shutdown = true;
        queue.removeIf(t -> t.periodMs > 0 || t.dueMs > time.milliseconds());
    }

    @Override
    public List<Runnable> shutdownNow() {
        shutdown = true;
        List<Runnable> left = new ArrayList<>();
        queue.forEach(t -> left.add(t.work));
        queue.clear();
        return left;
    }

    @Override
    public boolean isShutdown() {
        return shutdown;
    }

    @Override
    public boolean isTerminated() {
        return shutdown && queue.isEmpty();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        runDue(); // the tasks a real executor would finish before terminating
        return isTerminated();
    }

    private final class Task extends CompletableFuture<Void> implements ScheduledFuture<Void> {
        final Runnable work;
        final long seq;
        final long periodMs;
        long dueMs;

        Task(Runnable work, long dueMs, long seq, long periodMs) {
            this.work = work;
            this.dueMs = dueMs;
            this.seq = seq;
            this.periodMs = periodMs;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(dueMs - time.milliseconds(), TimeUnit.MILLISECONDS);
        }

        @Override
        public int compareTo(Delayed other) {
            return Long.compare(getDelay(TimeUnit.MILLISECONDS), other.getDelay(TimeUnit.MILLISECONDS));
        }
    }
}
