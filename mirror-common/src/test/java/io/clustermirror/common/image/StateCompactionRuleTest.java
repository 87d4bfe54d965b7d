package io.clustermirror.common.image;

import io.clustermirror.common.PartitionState;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.RecordCodec;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The reader's rule for partition states gives the same image whether {@code __mirror_state} is read live, after
 * compaction (Kafka's log cleaner keeps the last record of each key in the cleaned part of the log, and drops tombstones
 * once {@code delete.retention.ms} passed), or replayed again after a restart.
 */
class StateCompactionRuleTest {
    /** One record of the log: a key and a value, null for a tombstone. */
    private record Entry(String key, PartitionStateRecord value) {
    }

    private static PartitionStateRecord state(int partition, int leaderEpoch, PartitionState state, long lastMirroredOffset) {
        return new PartitionStateRecord("dr", "t", partition, state, leaderEpoch, leaderEpoch % 3, "id", lastMirroredOffset, -1,
            List.of(), 0L, 0L, null, -1L, -1L, -1L, lastMirroredOffset);
    }

    private static Entry write(PartitionStateRecord record) {
        return new Entry(record.logKey(), record);
    }

    private static MirrorImage replay(List<Entry> log) {
        MirrorDelta delta = new MirrorDelta(MirrorImage.EMPTY);
        for (Entry e : log) {
            delta.replayState(RecordCodec.encodeKey(e.key()), e.value() == null ? null : RecordCodec.encodeState(e.value()));
        }
        return delta.apply();
    }

    /**
     * What the log cleaner leaves of the log once it has cleaned offsets below {@code cleanedUpTo}: there, only the last
     * record of each key (among those below the point) stays, and tombstones go too when {@code dropTombstones}.
     */
    private static List<Entry> compact(List<Entry> log, int cleanedUpTo, boolean dropTombstones) {
        Map<String, Integer> lastOffset = new HashMap<>();
        for (int offset = 0; offset < cleanedUpTo; offset++) {
            lastOffset.put(log.get(offset).key(), offset);
        }
        List<Entry> compacted = new ArrayList<>();
        for (int offset = 0; offset < log.size(); offset++) {
            Entry e = log.get(offset);
            boolean cleaned = offset < cleanedUpTo;
            if (cleaned && (lastOffset.get(e.key()) != offset || (dropTombstones && e.value() == null))) {
                continue;
            }
            compacted.add(e);
        }
        return compacted;
    }

    private static void assertSameStatesBeforeAndAfterCompaction(List<Entry> log) {
        Map<String, PartitionStateRecord> live = replay(log).partitionStates();
        assertEquals(live, replay(compact(log, log.size(), false)).partitionStates(), "after compaction");
        assertEquals(live, replay(compact(log, log.size(), true)).partitionStates(), "after compaction and tombstone removal");
        for (int cleanedUpTo = 0; cleanedUpTo < log.size(); cleanedUpTo++) {
            assertEquals(live, replay(compact(log, cleanedUpTo, false)).partitionStates(), "after cleaning up to " + cleanedUpTo);
        }
        List<Entry> once = compact(log, log.size(), false);
        assertEquals(live, replay(compact(once, once.size(), true)).partitionStates(), "compacted twice");
    }

    @Test
    void aDeposedLeadersLateRecordLosesBeforeAndAfterCompaction() {
        PartitionStateRecord newLeader = state(0, 6, PartitionState.STOPPED, 100);
        PartitionStateRecord deposedLate = state(0, 5, PartitionState.MIRRORING, 90);
        List<Entry> log = List.of(write(state(0, 5, PartitionState.MIRRORING, 80)), write(newLeader), write(deposedLate));

        assertEquals(newLeader, replay(log).partitionStates().get(newLeader.key()));
        assertEquals(newLeader, replay(compact(log, log.size(), true)).partitionStates().get(newLeader.key()));
        assertSameStatesBeforeAndAfterCompaction(log);
    }

    @Test
    void theNewerLeaderMayTombstoneTheOlderEpochsKeyAndALateRecordThereStillLoses() {
        PartitionStateRecord newLeader = state(0, 6, PartitionState.MIRRORING, 100);
        PartitionStateRecord deposedLate = state(0, 5, PartitionState.FAILED, 90);
        List<Entry> log = List.of(write(state(0, 5, PartitionState.MIRRORING, 80)), write(newLeader),
            new Entry(deposedLate.logKey(), null), write(deposedLate));

        MirrorImage image = replay(log);
        assertEquals(newLeader, image.partitionStates().get(newLeader.key()));
        assertEquals(List.of(deposedLate.logKey(), newLeader.logKey()), image.stateLogKeysOf(newLeader.key()));
        assertEquals(List.of(deposedLate.logKey()), image.stateLogKeysSupersededBy(newLeader));
        assertSameStatesBeforeAndAfterCompaction(log);
    }

    @Test
    void theLastRecordOfALeaderEpochIsItsLeadersLatestState() {
        PartitionStateRecord latest = state(0, 3, PartitionState.PAUSED, 50);
        List<Entry> log = List.of(write(state(0, 3, PartitionState.MIRRORING, 40)), write(latest));
        assertEquals(latest, replay(log).partitionStates().get(latest.key()));
        assertSameStatesBeforeAndAfterCompaction(log);
    }

    @Test
    void tombstonesOfEveryLogKeyForgetThePartition() {
        PartitionStateRecord epoch5 = state(0, 5, PartitionState.STOPPED, 10);
        PartitionStateRecord epoch6 = state(0, 6, PartitionState.STOPPED, 10);
        List<Entry> log = new ArrayList<>(List.of(write(epoch5), write(epoch6)));
        replay(log).stateLogKeysOf(epoch6.key()).forEach(k -> log.add(new Entry(k, null)));
        assertEquals(Map.of(), replay(log).partitionStates());
        assertSameStatesBeforeAndAfterCompaction(log);
    }

    /**
     * Leaders follow each other with rising epochs; each writes its states in order, and a deposed leader keeps writing
     * for a while, interleaved with its successors (two brokers both believing they lead); new leaders tombstone the keys
     * of older epochs they have seen. Whatever the interleaving and however much of the log is cleaned, the image is the
     * same, and each partition's state is the latest record of the highest epoch written.
     */
    @Test
    void randomInterleavingsOfLeadersGiveTheSameStatesBeforeAndAfterCompaction() {
        Random random = new Random(42);
        for (int round = 0; round < 300; round++) {
            List<Entry> log = new ArrayList<>();
            Map<Integer, PartitionStateRecord> expected = new HashMap<>();
            for (int partition = 0; partition < 3; partition++) {
                interleaveLeaders(random, partition, log, expected);
            }
            Map<String, PartitionStateRecord> states = replay(log).partitionStates();
            for (PartitionStateRecord r : expected.values()) {
                assertEquals(r, states.get(r.key()), "round " + round + ": " + log);
            }
            assertSameStatesBeforeAndAfterCompaction(log);
        }
    }

    private static void interleaveLeaders(Random random, int partition, List<Entry> log, Map<Integer, PartitionStateRecord> expected) {
        int leaders = 1 + random.nextInt(4);
        int epoch = random.nextInt(3);
        Set<String> keysSeen = new HashSet<>();
        List<PartitionStateRecord> deposedLate = new ArrayList<>();
        long offset = 0;
        for (int leader = 0; leader < leaders; leader++, epoch += 1 + random.nextInt(2)) {
            int writes = 1 + random.nextInt(3);
            for (int w = 0; w < writes; w++) {
                PartitionStateRecord record = state(partition, epoch, PartitionState.values()[random.nextInt(PartitionState.values().length)], offset++);
                insertAfterRandomDeposedWrites(random, log, deposedLate);
                log.add(write(record));
                expected.put(partition, record);
                if (w == 0) {
                    for (String k : keysSeen) {
                        if (random.nextBoolean()) {
                            log.add(new Entry(k, null)); // the new leader tombstones what its image showed of older epochs
                        }
                    }
                }
                keysSeen.add(record.logKey());
            }
            // The deposed leader's late writes, at its old epoch, land somewhere among its successors' writes.
            for (int late = random.nextInt(3); late > 0; late--) {
                deposedLate.add(state(partition, epoch, PartitionState.FAILED, offset++));
            }
        }
        log.addAll(deposedLate.stream().map(StateCompactionRuleTest::write).toList());
        // A deposed leader's late write may be the last record of the partition; it is still not the state.
        deposedLate.stream().filter(r -> r.leaderEpoch() == expected.get(partition).leaderEpoch()).reduce((a, b) -> b)
            .ifPresent(r -> expected.put(partition, r));
    }

    private static void insertAfterRandomDeposedWrites(Random random, List<Entry> log, List<PartitionStateRecord> deposedLate) {
        while (!deposedLate.isEmpty() && random.nextBoolean()) {
            log.add(write(deposedLate.remove(0)));
        }
    }
}
