package io.clustermirror.common.image;

import io.clustermirror.common.PartitionState;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.RecordCodec;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.BinaryOperator;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The image's partition states are derived change by change ({@link PartitionStateIndex#with}): whatever the order and the
 * batching of the records, every derived view equals what the last record of each log key alone defines, computed here
 * the plain way (a scan of everything).
 */
class PartitionStateIndexTest {
    private static final List<String> TOPICS = List.of("a", "b", "c");
    private static final PartitionState[] STATES = {PartitionState.PREPARING, PartitionState.MIRRORING, PartitionState.STOPPED,
        PartitionState.FAILED};

    private static PartitionStateRecord state(String mirror, String topic, int partition, int leaderEpoch, PartitionState state,
                                              long updatedMs) {
        return new PartitionStateRecord(mirror, topic, partition, state, leaderEpoch, 1, "id", -1, -1, List.of(), 0L, 0L, null, -1L,
            -1L, -1L, updatedMs);
    }

    /** A random write or tombstone of a few mirrors' topics, partitions and leader epochs (so log keys meet often). */
    private static Map.Entry<String, PartitionStateRecord> randomChange(Random random, Map<String, PartitionStateRecord> log) {
        if (!log.isEmpty() && random.nextInt(5) == 0) {
            List<String> keys = new ArrayList<>(log.keySet());
            keys.sort(null);
            return new java.util.AbstractMap.SimpleEntry<>(keys.get(random.nextInt(keys.size())), null);
        }
        PartitionStateRecord record = state(random.nextBoolean() ? "dr" : "other", TOPICS.get(random.nextInt(TOPICS.size())),
            random.nextInt(6), random.nextInt(4), STATES[random.nextInt(STATES.length)], random.nextInt(1000));
        return new java.util.AbstractMap.SimpleEntry<>(record.logKey(), record);
    }

    @Test
    void everyViewEqualsTheOneDerivedFromTheLastRecordOfEachLogKey() {
        for (long seed = 0; seed < 300; seed++) {
            Random random = new Random(seed);
            Map<String, PartitionStateRecord> log = new HashMap<>();
            MirrorImage image = MirrorImage.EMPTY;
            int steps = 1 + random.nextInt(40);
            for (int step = 0; step < steps; step++) {
                // Each batch is one image, as a broker builds one per poll of the internal topics.
                MirrorDelta delta = new MirrorDelta(image);
                int batch = 1 + random.nextInt(8);
                for (int i = 0; i < batch; i++) {
                    Map.Entry<String, PartitionStateRecord> change = randomChange(random, log);
                    if (change.getValue() == null) {
                        log.remove(change.getKey());
                    } else {
                        log.put(change.getKey(), change.getValue());
                    }
                    delta.replayState(RecordCodec.encodeKey(change.getKey()),
                        change.getValue() == null ? null : RecordCodec.encodeState(change.getValue()));
                }
                image = delta.apply();
                assertDerivedFrom(log, image, "seed " + seed + ", step " + step);
            }
        }
    }

    private static void assertDerivedFrom(Map<String, PartitionStateRecord> log, MirrorImage image, String at) {
        assertEquals(log, image.stateLog(), at);
        Map<String, PartitionStateRecord> states = log.values().stream().collect(Collectors.toMap(PartitionStateRecord::key,
            Function.identity(), BinaryOperator.maxBy(PartitionStateIndex.PRECEDENCE)));
        assertEquals(states, image.partitionStates(), at);
        for (String mirror : List.of("dr", "other")) {
            for (String topic : TOPICS) {
                List<PartitionStateRecord> ofTopic = states.values().stream()
                    .filter(s -> s.mirror().equals(mirror) && s.topic().equals(topic))
                    .sorted(Comparator.comparingInt(PartitionStateRecord::partition)).toList();
                assertEquals(ofTopic, List.copyOf(image.partitionStatesOf(mirror, topic)), at + ": " + mirror + "/" + topic);
                boolean allStopped = ofTopic.stream().allMatch(s -> s.state() == PartitionState.STOPPED);
                assertEquals(!ofTopic.isEmpty() && allStopped, image.stoppedOnEveryPartition(mirror, topic, ofTopic.size()), at);
                for (int partition = 0; partition < 6; partition++) {
                    String key = PartitionStateRecord.stateKey(mirror, topic, partition);
                    List<String> keys = log.keySet().stream().filter(k -> log.get(k).key().equals(key)).sorted().toList();
                    assertEquals(keys, image.stateLogKeysOf(key), at + ": log keys of " + key);
                }
            }
        }
    }

    @Test
    void anImageLeavesItsBaseAsItWas() {
        PartitionStateRecord first = state("dr", "a", 0, 1, PartitionState.MIRRORING, 10);
        MirrorDelta delta = new MirrorDelta(MirrorImage.EMPTY);
        delta.replayState(RecordCodec.encodeKey(first.logKey()), RecordCodec.encodeState(first));
        MirrorImage base = delta.apply();
        MirrorDelta next = new MirrorDelta(base);
        PartitionStateRecord stopped = state("dr", "a", 0, 2, PartitionState.STOPPED, 20);
        next.replayState(RecordCodec.encodeKey(stopped.logKey()), RecordCodec.encodeState(stopped));
        MirrorImage image = next.apply();
        assertTrue(image.stoppedOnEveryPartition("dr", "a", 1));
        assertFalse(base.stoppedOnEveryPartition("dr", "a", 1));
        assertEquals(List.of(first), List.copyOf(base.partitionStatesOf("dr", "a")));
        assertEquals(List.of(first.logKey()), base.stateLogKeysOf(first.key()));
    }
}
