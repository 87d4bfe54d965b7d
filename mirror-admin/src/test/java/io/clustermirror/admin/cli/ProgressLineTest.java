package io.clustermirror.admin.cli;

import io.clustermirror.admin.OperationProgress;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertEquals;

class ProgressLineTest {
    private static ProgressLine.Reading at(long atMs, long remaining) {
        return new ProgressLine.Reading(atMs, remaining);
    }

    @Test
    void theLineSaysPartitionsOffsetsTimeLeftAndTimeSpent() {
        assertEquals("Catching up: 3/8 partitions, 12,345 offsets behind, ETA 1m23s, elapsed 12s",
            ProgressLine.render("Catching up", "behind", new OperationProgress(3, 8, 12_345), 12_000,
                List.of(at(0, 13_845), at(10_000, 12_345))));
        assertEquals("Verifying: 0/1 partitions, 500 offsets to compare, ETA unknown, elapsed 0s",
            ProgressLine.render("Verifying", "to compare", new OperationProgress(0, 1, 500), 0, List.of(at(0, 500))));
    }

    @Test
    void theTimeLeftFollowsTheRateTheOffsetsToGoWentDownAt() {
        // 1,000 offsets in 10 s: 100 per second, so 2,500 take 25 s.
        assertEquals(OptionalLong.of(25_000), ProgressLine.etaMs(List.of(at(0, 3_500), at(4_000, 3_100), at(10_000, 2_500))));
        // Only the oldest and the newest readings count: a pause between them does not change the rate.
        assertEquals(OptionalLong.of(25_000), ProgressLine.etaMs(List.of(at(0, 3_500), at(4_000, 3_500), at(10_000, 2_500))));
        assertEquals(OptionalLong.of(0), ProgressLine.etaMs(List.of(at(0, 10), at(1_000, 0))), "done");
        // Rounded up: never 0 while something remains.
        assertEquals(OptionalLong.of(1), ProgressLine.etaMs(List.of(at(0, 3_001), at(1, 1))));
    }

    @Test
    void theTimeLeftIsUnknownUntilTheOffsetsToGoGoDown() {
        assertEquals(OptionalLong.empty(), ProgressLine.etaMs(List.of()));
        assertEquals(OptionalLong.empty(), ProgressLine.etaMs(List.of(at(0, 100))), "one reading has no rate");
        assertEquals(OptionalLong.empty(), ProgressLine.etaMs(List.of(at(0, 100), at(5_000, 100))), "standing still");
        assertEquals(OptionalLong.empty(), ProgressLine.etaMs(List.of(at(0, 100), at(5_000, 180))),
            "the source is written faster than it is mirrored");
        assertEquals(OptionalLong.empty(), ProgressLine.etaMs(List.of(at(5_000, 100), at(5_000, 50))), "no time passed");
    }

    @Test
    void durationsReadAsPeopleSayThem() {
        assertEquals("0s", ProgressLine.duration(0));
        assertEquals("1s", ProgressLine.duration(1), "rounded up");
        assertEquals("59s", ProgressLine.duration(59_000));
        assertEquals("1m00s", ProgressLine.duration(60_000));
        assertEquals("3m05s", ProgressLine.duration(185_000));
        assertEquals("2h07m", ProgressLine.duration((2 * 3600 + 7 * 60 + 30) * 1000L));
    }
}
