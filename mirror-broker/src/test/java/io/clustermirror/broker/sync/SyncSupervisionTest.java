package io.clustermirror.broker.sync;

import io.clustermirror.common.records.MirrorRecord;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

class SyncSupervisionTest {
    private static final MirrorRecord DR = new MirrorRecord("dr", Map.of("bootstrap.servers", "a:9092"), "source", 1L);
    private static final MirrorRecord DR_ALTERED = new MirrorRecord("dr", Map.of("bootstrap.servers", "b:9092"), "source", 1L);
    private static final MirrorRecord DR_RECREATED = new MirrorRecord("dr", Map.of("bootstrap.servers", "a:9092"), "source", 2L);
    private static final MirrorRecord BACKUP = new MirrorRecord("backup", Map.of("bootstrap.servers", "c:9092"), "other", 1L);

    @Test
    void aSyncStartsForEachMirrorOfTheImageThatHasNone() {
        assertEquals(new SyncSupervision(Map.of(), List.of(BACKUP, DR)),
            SyncSupervision.of(Map.of(), Map.of("dr", DR, "backup", BACKUP), Map.of()));
    }

    @Test
    void aSyncOfAnUnchangedMirrorKeepsRunning() {
        assertEquals(new SyncSupervision(Map.of(), List.of()), SyncSupervision.of(Map.of("dr", DR), Map.of("dr", DR), Map.of()));
    }

    @Test
    void aSyncOfADeletedMirrorStops() {
        assertEquals(new SyncSupervision(Map.of("dr", "mirror deleted"), List.of()),
            SyncSupervision.of(Map.of("dr", DR), Map.of(), Map.of()));
    }

    @Test
    void newConfigsOrARecreatedMirrorRestartTheSyncFromTheNewRecordInTheSameRound() {
        assertEquals(new SyncSupervision(Map.of("dr", "configs changed: it restarts with new source clients"), List.of(DR_ALTERED)),
            SyncSupervision.of(Map.of("dr", DR), Map.of("dr", DR_ALTERED), Map.of()));
        assertEquals(new SyncSupervision(Map.of("dr", "mirror recreated"), List.of(DR_RECREATED)),
            SyncSupervision.of(Map.of("dr", DR), Map.of("dr", DR_RECREATED), Map.of()));
    }

    @Test
    void aMirrorWhoseSyncCouldNotBeBuiltIsTriedAgainOnlyOnceItsRecordChanges() {
        assertEquals(new SyncSupervision(Map.of(), List.of()), SyncSupervision.of(Map.of(), Map.of("dr", DR), Map.of("dr", DR)));
        assertEquals(new SyncSupervision(Map.of(), List.of(DR_ALTERED)),
            SyncSupervision.of(Map.of(), Map.of("dr", DR_ALTERED), Map.of("dr", DR)));
    }
}
