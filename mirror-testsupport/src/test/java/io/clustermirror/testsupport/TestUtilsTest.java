package io.clustermirror.testsupport;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TestUtilsTest {

    @Test
    void waitForReturnsOnceTheConditionHolds() throws InterruptedException {
        AtomicInteger calls = new AtomicInteger();
        TestUtils.waitFor(() -> calls.incrementAndGet() == 3, Duration.ofSeconds(10), "three calls");
        assertEquals(3, calls.get());
    }

    @Test
    void waitForValueIgnoresTransientErrors() throws InterruptedException {
        AtomicInteger calls = new AtomicInteger();
        String value = TestUtils.waitForValue(() -> {
            if (calls.incrementAndGet() < 3) {
                throw new IllegalStateException("not yet");
            }
            return Optional.of("done");
        }, Duration.ofSeconds(10), "a value");
        assertEquals("done", value);
    }

    @Test
    void timeoutNamesTheConditionAndTheLastError() {
        IllegalStateException failure = new IllegalStateException("broker 2 unreachable");
        AssertionError error = assertThrows(AssertionError.class, () -> TestUtils.waitFor(() -> {
            throw failure;
        }, Duration.ofMillis(50), "broker 2 to be up"));
        assertTrue(error.getMessage().contains("broker 2 to be up"), error.getMessage());
        assertTrue(error.getMessage().contains("broker 2 unreachable"), error.getMessage());
        assertSame(failure, error.getCause());
    }
}
