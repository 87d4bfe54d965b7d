package io.clustermirror.common.records;

import io.clustermirror.common.DesiredState;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RecordCodecTest {
    static final PartitionStateRecord STATE = new PartitionStateRecord("dr", "orders", 3, PartitionState.MIRRORING,
        7, 2, "src-topic-id", 41L, 5, List.of(new EpochStart(0, 0L), new EpochStart(5, 30L)), 50L, 42L, null,
        -1L, -1L, -1L, 1_700_000_000_000L);

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    @Test
    void keysAreUtf8() {
        assertArrayEquals(utf8("topic:zoë"), RecordCodec.encodeKey(RecordCodec.topicKey("zoë")));
        assertEquals("mirror:dr", RecordCodec.decodeKey(RecordCodec.encodeKey(RecordCodec.mirrorKey("dr"))));
    }

    @Test
    void commandsRoundTripPolymorphically() {
        MirrorCommand request = new MirrorCommand("c-1", CommandOp.START, "dr", Map.of(),
            List.of("orders.*"), List.of("orders.tmp"), 123L);
        CommandResult result = CommandResult.failed("c-1", MirrorError.TOPIC_ALREADY_IN_CLUSTER_MIRROR, "no");
        byte[] encodedRequest = RecordCodec.encodeCommand(request);
        byte[] encodedResult = RecordCodec.encodeCommand(result);
        assertTrue(text(encodedRequest).contains("\"type\":\"request\""), text(encodedRequest));
        assertTrue(text(encodedResult).contains("\"type\":\"result\""), text(encodedResult));
        assertEquals(request, RecordCodec.decodeCommand(encodedRequest));
        assertEquals(result, RecordCodec.decodeCommand(encodedResult));
        CommandResult ok = CommandResult.ok("c-2", "started 2 topics", List.of("a", "b"));
        assertEquals(ok, RecordCodec.decodeCommand(RecordCodec.encodeCommand(ok)));
    }

    @Test
    void everyValueCarriesTheVersion() {
        assertTrue(text(RecordCodec.encodeState(STATE)).startsWith("{\"v\":1,"));
        assertTrue(text(RecordCodec.encodeCommand(CommandResult.ok("c", "", null))).startsWith("{\"v\":1,"));
    }

    @Test
    void metadataDecodesByKeyPrefix() {
        MirrorRecord mirror = new MirrorRecord("dr", Map.of("bootstrap.servers", "s:9092"), "cluster-A", 5L);
        MirrorTopicRecord topic = new MirrorTopicRecord("orders", "dr", DesiredState.PAUSED, "tid", 12, 6L);
        assertEquals(mirror, RecordCodec.decodeMetadata(RecordCodec.mirrorKey("dr"), RecordCodec.encodeMirror(mirror)));
        assertEquals(topic, RecordCodec.decodeMetadata(RecordCodec.topicKey("orders"), RecordCodec.encodeTopic(topic)));
        assertThrows(IllegalArgumentException.class,
            () -> RecordCodec.decodeMetadata("group:g", RecordCodec.encodeTopic(topic)));
    }

    @Test
    void theControllerPositionAndTheLastCommandOfATopicRoundTrip() {
        ControllerPositionRecord position = new ControllerPositionRecord(42L, "c-41", 7L, "AAAAAAAAAAAAAAAAAAAAAQ");
        assertEquals(position, RecordCodec.decodeMetadata(RecordCodec.CONTROLLER_POSITION_KEY,
            RecordCodec.encodeControllerPosition(position)));
        MirrorTopicRecord topic = new MirrorTopicRecord("orders", "dr", DesiredState.STOPPED, "tid", 3, 9L,
            new LastCommand("c-41", CommandOp.STOP, 9L, "stopping 1 topic(s) of mirror 'dr'"));
        assertEquals(topic, RecordCodec.decodeTopic(RecordCodec.encodeTopic(topic)));
        MirrorCommand discarding = new MirrorCommand("c-42", CommandOp.START, "dr", Map.of(), List.of("orders"), List.of(), 1L, true);
        assertEquals(discarding, RecordCodec.decodeCommand(RecordCodec.encodeCommand(discarding)));
        MirrorCommand alter = new MirrorCommand("c-43", CommandOp.ALTER, "dr", Map.of("mirror.fetch.max.wait.ms", "200"), List.of(),
            List.of(), 1L, false, List.of("mirror.fetch.min.bytes"));
        assertEquals(alter, RecordCodec.decodeCommand(RecordCodec.encodeCommand(alter)));
    }

    @Test
    void valuesWrittenBeforeTheNewFieldsReadWithTheirDefaults() {
        String topic = "{\"v\":1,\"topic\":\"orders\",\"mirror\":\"dr\",\"desired\":\"STOPPED\",\"sourceTopicId\":\"t\","
            + "\"partitions\":4,\"updatedMs\":8}";
        assertEquals(null, RecordCodec.decodeTopic(utf8(topic)).lastCommand());
        String start = "{\"v\":1,\"type\":\"request\",\"commandId\":\"c\",\"op\":\"START\",\"mirror\":\"dr\","
            + "\"topics\":[\"orders\"],\"timestampMs\":1}";
        assertEquals(new MirrorCommand("c", CommandOp.START, "dr", Map.of(), List.of("orders"), List.of(), 1L),
            RecordCodec.decodeCommand(utf8(start)), "a START written without the option discards nothing (and deletes no config)");
    }

    /**
     * The controller's position names its command log by topic id: a position written by an earlier version reads with no id,
     * and one written now reads in an earlier version (which ignores unknown fields) as it always did.
     */
    @Test
    void theControllerPositionNamesItsCommandLogAndReadsAcrossVersions() {
        String earlier = "{\"v\":1,\"nextOffset\":4,\"lastCommandId\":\"c-3\",\"updatedMs\":9}";
        assertEquals(new ControllerPositionRecord(4, "c-3", 9, null), RecordCodec.decodeControllerPosition(utf8(earlier)));
        String now = text(RecordCodec.encodeControllerPosition(new ControllerPositionRecord(4, "c-3", 9, "AAAAAAAAAAAAAAAAAAAAAQ")));
        assertTrue(now.startsWith(earlier.substring(0, earlier.length() - 1) + ",\"commandsTopicId\":\"AAAAAAAAAAAAAAAAAAAAAQ\""), now);
        record EarlierPosition(long nextOffset, String lastCommandId, long updatedMs) {
        }
        assertEquals(new EarlierPosition(4, "c-3", 9), com.fasterxml.jackson.databind.json.JsonMapper.builder()
                .disable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build()
                .convertValue(parse(now), EarlierPosition.class),
            "an earlier version's reader, which ignores unknown fields, reads the same position");
    }

    private static com.fasterxml.jackson.databind.JsonNode parse(String json) {
        try {
            return new com.fasterxml.jackson.databind.ObjectMapper().readTree(json);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void stateRoundTripsIncludingNullsAndLineage() {
        assertEquals(STATE, RecordCodec.decodeState(RecordCodec.encodeState(STATE)));
        PartitionStateRecord failed = new PartitionStateRecord("dr", "orders", 0, PartitionState.FAILED, 1, 1, null,
            -1L, -1, null, 0L, 0L, "source topic recreated", 9L, 3L, 9L, 1L);
        assertEquals(failed, RecordCodec.decodeState(RecordCodec.encodeState(failed)));
        PartitionStateRecord lagging = withOldestUnmirrored(STATE, 1_699_999_999_000L);
        assertEquals(lagging, RecordCodec.decodeState(RecordCodec.encodeState(lagging)));
    }

    @Test
    void aStateWrittenBeforeTheSourceTimestampsReadsAsNotKnowingThem() {
        String old = new String(RecordCodec.encodeState(STATE), StandardCharsets.UTF_8);
        assertTrue(!old.contains("oldestUnmirroredTimestamp"), old);
        PartitionStateRecord read = RecordCodec.decodeState(utf8(old));
        assertEquals(null, read.oldestUnmirroredTimestamp());
        assertEquals(-1L, read.lagMs(STATE.updatedMs() + 5_000), "unknown, not caught up");
    }

    @Test
    void aStopCutRoundTripsAndARecordWithoutOneIsWrittenAsBefore() {
        PartitionStateRecord stopping = new PartitionStateRecord("dr", "orders", 0, PartitionState.STOPPING, 3, 2, "id", 6L, 2,
            List.of(), 7L, 7L, null, -1L, 5L, 7L, 1L, -1L, new StopCut(5, 7));
        assertEquals(stopping, RecordCodec.decodeState(RecordCodec.encodeState(stopping)));
        String without = new String(RecordCodec.encodeState(STATE), StandardCharsets.UTF_8);
        assertTrue(!without.contains("stopCut"), "no stop under way, no field: earlier readers see what they always saw: " + without);
        assertEquals(null, RecordCodec.decodeState(utf8(without)).stopCut());
    }

    @Test
    void theOffsetsAConsistentStopGivesRoundTripAndEarlierRecordsAndCommandsReadAsNone() {
        MirrorTopicRecord topic = new MirrorTopicRecord("orders", "dr", DesiredState.MIRRORING, "tid", 3, 9L, null)
            .stoppedAt(List.of(40L, -1L, 7L), List.of(new MirrorTopicRecord.GroupOffset(0, "app", 31L)),
                new LastCommand("c-1", CommandOp.STOP, 10L, "stopping"));
        assertEquals(topic, RecordCodec.decodeTopic(RecordCodec.encodeTopic(topic)));
        String earlier = text(RecordCodec.encodeTopic(topic)).replaceAll(",\\s*\"stopGroupOffsets\":\\[[^\\]]*\\]", "");
        assertTrue(!earlier.contains("stopGroupOffsets"), earlier);
        assertEquals(List.of(), RecordCodec.decodeTopic(utf8(earlier)).stopGroupOffsets(), "a record an earlier version wrote");
        MirrorCommand command = new MirrorCommand("c-1", CommandOp.STOP, "dr", Map.of(), List.of("orders"), List.of(), 1L, false,
            List.of(), List.of(), List.of(new MirrorCommand.PartitionCut("orders", 0, 40L, Map.of("app", 31L)),
                new MirrorCommand.PartitionCut("orders", 2, 7L)));
        assertEquals(command, RecordCodec.decodeCommand(RecordCodec.encodeCommand(command)));
        assertTrue(!text(RecordCodec.encodeCommand(new MirrorCommand("c-2", CommandOp.STOP, "dr", Map.of(), List.of("orders"), List.of(), 1L,
            false, List.of(), List.of(), List.of(new MirrorCommand.PartitionCut("orders", 2, 7L))))).contains("groupOffsets"),
            "a cut without group offsets is written as before");
    }

    @Test
    void aTransactionalOffsetCommitOfTheSourceRoundTrips() {
        SourceOffsetCommitRecord commit = new SourceOffsetCommitRecord("dr", "app", "orders", 3, 4242L, 17L, (short) 5, 12, 900L, 1_000L);
        assertEquals(commit, RecordCodec.decodeOffsetCommit(RecordCodec.encodeOffsetCommit(commit)));
    }

    @Test
    void aStopCutKeepsTheAbortsItRemovesAndOneRecordedWithoutThemReadsAsNone() {
        StopCut cut = new StopCut(5, 9, List.of(new io.clustermirror.common.batch.TransactionMarker(42L, (short) 3, false, 7, 1_000L)));
        PartitionStateRecord stopping = new PartitionStateRecord("dr", "orders", 0, PartitionState.STOPPING, 3, 2, "id", 6L, 2,
            List.of(), 9L, 9L, null, -1L, 5L, 9L, 1L, -1L, cut);
        assertEquals(cut, RecordCodec.decodeState(RecordCodec.encodeState(stopping)).stopCut());
        String earlier = text(RecordCodec.encodeState(stopping)).replaceAll(",\\s*\"abortsPastCut\":\\[[^\\]]*\\]", "");
        assertTrue(!earlier.contains("abortsPastCut"), earlier);
        assertEquals(new StopCut(5, 9), RecordCodec.decodeState(utf8(earlier)).stopCut(), "a cut an earlier version recorded");
        assertThrows(IllegalArgumentException.class, () -> new StopCut(5, 9,
            List.of(new io.clustermirror.common.batch.TransactionMarker(42L, (short) 3, true, 7, 1_000L))), "commits are not rewritten");
    }

    @Test
    void theRetriesOfAFailedPartitionAndARecoveryRoundTripAndAreLeftOutWhenThereAreNone() {
        PartitionStateRecord failed = new PartitionStateRecord("dr", "orders", 0, PartitionState.FAILED, 3, 2, "id", 6L, 2,
            List.of(), 7L, 7L, "UNKNOWN_SERVER_ERROR: refused", -1L, -1L, -1L, 1L, -1L, null, null, new FailureRetries(3, 1_500L, true));
        assertEquals(failed, RecordCodec.decodeState(RecordCodec.encodeState(failed)));
        assertTrue(!text(RecordCodec.encodeState(STATE)).contains("failureRetries"), "earlier readers see what they always saw");
        assertEquals(null, RecordCodec.decodeState(RecordCodec.encodeState(STATE)).failureRetries());
        assertThrows(IllegalArgumentException.class, () -> new PartitionStateRecord("dr", "orders", 0, PartitionState.MIRRORING, 3, 2,
            "id", 6L, 2, List.of(), 7L, 7L, null, -1L, -1L, -1L, 1L, -1L, null, null, new FailureRetries(1, 5L, true)),
            "only a FAILED partition has retries");
        assertThrows(IllegalArgumentException.class, () -> new FailureRetries(1, 5L, false), "no automatic retry beyond recovery");

        MirrorTopicRecord topic = new MirrorTopicRecord("orders", "dr", DesiredState.MIRRORING, "tid", 3, 9L, null)
            .recovered(new LastCommand("c-44", CommandOp.RECOVER, 10L, "recovering"));
        assertEquals("c-44", topic.recoveryCommandId());
        assertEquals(topic, RecordCodec.decodeTopic(RecordCodec.encodeTopic(topic)));
        assertEquals("c-44", topic.withDesired(DesiredState.PAUSED, new LastCommand("c-45", CommandOp.PAUSE, 11L, "paused"))
            .recoveryCommandId(), "a later command keeps the last recovery, so leaders do not see it again as new");
        String earlier = "{\"v\":1,\"topic\":\"orders\",\"mirror\":\"dr\",\"desired\":\"STOPPED\",\"partitions\":4,\"updatedMs\":8}";
        assertEquals(null, RecordCodec.decodeTopic(utf8(earlier)).recoveryCommandId());
    }

    @Test
    void aStopCutMustNotEndBelowItsOffset() {
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
            () -> new StopCut(7, 5));
        assertTrue(e.getMessage().contains("0 <= offset <= logEnd"), e.getMessage());
    }

    static PartitionStateRecord withOldestUnmirrored(PartitionStateRecord r, Long timestamp) {
        return new PartitionStateRecord(r.mirror(), r.topic(), r.partition(), r.state(), r.leaderEpoch(), r.leaderId(),
            r.sourceTopicId(), r.lastMirroredOffset(), r.lastMirroredEpoch(), r.sourceEpochs(), r.sourceLogEndOffset(),
            r.destLogEndOffset(), r.lastError(), r.barrierOffset(), r.truncatedFromOffset(), r.truncatedToOffset(), r.updatedMs(),
            timestamp);
    }

    @Test
    void ignoresUnknownFieldsAndReadsNewerVersions() {
        String json = "{\"v\":9,\"topic\":\"orders\",\"mirror\":\"dr\",\"desired\":\"MIRRORING\","
            + "\"sourceTopicId\":\"t\",\"partitions\":4,\"updatedMs\":8,\"futureField\":{\"x\":[1,2]}}";
        assertEquals(new MirrorTopicRecord("orders", "dr", DesiredState.MIRRORING, "t", 4, 8L),
            RecordCodec.decodeTopic(utf8(json)));
        String command = "{\"v\":2,\"type\":\"result\",\"commandId\":\"c\",\"error\":\"NONE\",\"extra\":true}";
        assertEquals(CommandResult.ok("c", "", List.of()), RecordCodec.decodeCommand(utf8(command)));
    }

    @Test
    void rejectsGarbageUnversionedValuesAndTombstones() {
        assertThrows(IllegalArgumentException.class, () -> RecordCodec.decodeState(utf8("not json")));
        assertThrows(IllegalArgumentException.class, () -> RecordCodec.decodeState(utf8("{\"mirror\":\"dr\"}")));
        assertThrows(IllegalArgumentException.class, () -> RecordCodec.decodeState(utf8("[1]")));
        assertThrows(IllegalArgumentException.class, () -> RecordCodec.decodeState(null));
        assertThrows(IllegalArgumentException.class, () -> RecordCodec.decodeCommand(utf8("{\"v\":1,\"type\":\"nope\"}")));
    }
}
