package io.clustermirror.broker.partition;

import java.util.ArrayList;
import java.util.List;

/**
 * A deterministic {@link PassScheduler}: a pass asked for runs at once on the caller's thread; a periodic pass runs when
 * the test calls {@link #runPeriodic}.
 */
final class DirectScheduler implements PassScheduler {
    private final List<Runnable> periodic = new ArrayList<>();
    private boolean closed;

    @Override
    public void everyPeriod(Runnable pass, long periodMs) {
        requireOpen();
        periodic.add(pass);
    }

    @Override
    public void soon(Runnable pass) {
        requireOpen();
        pass.run();
    }

    /** Runs every periodic pass once, as if their period had passed. */
    void runPeriodic() {
        List.copyOf(periodic).forEach(Runnable::run);
    }

    @Override
    public void close() {
        closed = true;
        periodic.clear();
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("closed");
        }
    }
}
