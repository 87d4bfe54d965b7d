package io.clustermirror.broker.partition;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class LogFenceTest {
    @Test
    void admitsOnlyTheCurrentGeneration() throws Exception {
        LogFence fence = new LogFence(3);
        LogFence.Permit old = fence.permit(3);
        assertEquals("changed", old.change(() -> "changed"));
        fence.advanceTo(4);
        assertThrows(LogFence.SupersededException.class, old::check);
        assertThrows(LogFence.SupersededException.class, () -> old.change(() -> "too late"));
        assertEquals(4, fence.permit(4).change(() -> 4));
    }

    @Test
    void neverMovesBack() {
        LogFence fence = new LogFence(7);
        fence.advanceTo(5);
        assertEquals(7, fence.generation());
    }

    /**
     * A change admitted before the fence advanced completes before any change of the newer generation starts, and before
     * a wait for the changes in progress returns.
     */
    @Test
    void aChangeInProgressFinishesBeforeTheNextGenerationChanges() throws Exception {
        LogFence fence = new LogFence(1);
        List<String> log = java.util.Collections.synchronizedList(new ArrayList<>());
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<Void> old = CompletableFuture.runAsync(() -> {
            try {
                fence.permit(1).change(() -> {
                    inside.countDown();
                    awaitUninterruptibly(release);
                    log.add("old");
                    return null;
                });
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        inside.await(10, TimeUnit.SECONDS);
        fence.advanceTo(2);
        CompletableFuture<Void> next = CompletableFuture.runAsync(() -> {
            try {
                fence.permit(2).change(() -> log.add("new"));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        CompletableFuture<Void> drained = CompletableFuture.runAsync(() -> {
            fence.awaitChangesInProgress();
            log.add("drained");
        });
        release.countDown();
        old.get(10, TimeUnit.SECONDS);
        next.get(10, TimeUnit.SECONDS);
        drained.get(10, TimeUnit.SECONDS);
        assertEquals("old", log.get(0), "nothing passes a change in progress: " + log);
        assertEquals(java.util.Set.of("old", "new", "drained"), java.util.Set.copyOf(log));
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
