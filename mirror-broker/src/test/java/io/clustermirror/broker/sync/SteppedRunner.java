package io.clustermirror.broker.sync;

import org.apache.kafka.common.utils.MockTime;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;

/**
 * A {@link SyncScheduler.TaskRunner} that runs nothing on its own: a task waits until the test moves the mock clock with
 * {@link #advance}, which runs on the test's thread each task that falls due, earliest first (equal times in the order
 * they were scheduled), with the clock set to the task's due time. What a task throws fails the test.
 */
final class SteppedRunner implements SyncScheduler.TaskRunner {
    private final MockTime time;
    private final List<Task> waiting = new ArrayList<>();
    private boolean stopped;

    private record Task(long dueMs, Runnable work) {
    }

    SteppedRunner(MockTime time) {
        this.time = time;
    }

    /** Moves the clock {@code ms} forward, running every task that falls due on the way, at its time. */
    void advance(long ms) {
        long untilMs = time.milliseconds() + ms;
        for (Task next = nextDueBy(untilMs); next != null; next = nextDueBy(untilMs)) {
            waiting.remove(next);
            time.sleep(next.dueMs() - time.milliseconds());
            next.work().run();
        }
        time.sleep(untilMs - time.milliseconds());
    }

    /** Tasks scheduled and not run yet. */
    int waitingTasks() {
        return waiting.size();
    }

    private Task nextDueBy(long untilMs) {
        Task first = null;
        for (Task t : waiting) {
            if (t.dueMs() <= untilMs && (first == null || t.dueMs() < first.dueMs())) {
                first = t; // the list is in scheduling order, so the first of equal times wins
            }
        }
        return first;
    }

    @Override
    public void runAfter(long delayMs, Runnable task) {
        if (stopped) {
            throw new RejectedExecutionException("stopped");
        }
        waiting.add(new Task(time.milliseconds() + Math.max(0, delayMs), task));
    }

    @Override
    public void stop() {
        stopped = true;
        waiting.clear();
    }

    @Override
    public boolean awaitStopped(long waitMs) {
        return stopped;
    }
}
