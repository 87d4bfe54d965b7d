package io.clustermirror.admin.cli;

import io.clustermirror.admin.ClusterMirrorDescription;
import io.clustermirror.admin.ClusterMirrorListing;
import io.clustermirror.admin.MirrorPartitionDescription;
import io.clustermirror.admin.MirrorTopicDescription;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.PartitionState;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

class OutputFormatterTest {
    static final ClusterMirrorListing DR = new ClusterMirrorListing("dr", "src1:9092,src2:9092", "SrcId", 2);
    static final ClusterMirrorListing EMPTY = new ClusterMirrorListing("empty", "other:9092", "OtherId", 0);

    static MirrorPartitionDescription mirroring(int partition, long sourceEnd, long destEnd) {
        return new MirrorPartitionDescription(partition, PartitionState.MIRRORING, sourceEnd, destEnd,
            Math.max(0, sourceEnd - destEnd), sourceEnd - 1, 3, null, -1, -1, -1, 1, sourceEnd > destEnd ? 300 : 0);
    }

    static final ClusterMirrorDescription DR_DESCRIPTION = new ClusterMirrorDescription("dr",
        Map.of("bootstrap.servers", "src1:9092,src2:9092", "sasl.jaas.config", "[hidden]",
            "mirror.fetch.max.bytes", "1048576"),
        "SrcId",
        List.of(
            new MirrorTopicDescription("orders", DesiredState.MIRRORING, List.of(
                mirroring(0, 1200, 1200),
                new MirrorPartitionDescription(1, PartitionState.FAILED, 900, 850, 50, 849, 3,
                    "SOURCE_TOPIC_CHANGED: source topic id changed\n(recreated?)", -1, -1, -1, 2, 1500, List.of(), 3, 5_000, true))),
            new MirrorTopicDescription("payments", DesiredState.STOPPED, List.of(
                new MirrorPartitionDescription(0, PartitionState.STOPPED, 40, 41, 0, 39, 5, null, 40, 38, 40, 1, 250),
                new MirrorPartitionDescription(1, PartitionState.UNKNOWN, -1, -1, -1, -1, -1, null, -1, -1, -1,
                    -1)), new MirrorTopicDescription.Command("c-7", "STOP", 0L, "stopping 1 topic(s) of mirror 'dr'"), List.of())));

    static final ClusterMirrorDescription EMPTY_DESCRIPTION = new ClusterMirrorDescription("empty",
        Map.of("bootstrap.servers", "other:9092"), "OtherId", List.of());

    @Test
    void listText() {
        assertEquals("dr  source=src1:9092,src2:9092  source-cluster-id=SrcId  topics=2\n"
            + "empty  source=other:9092  source-cluster-id=OtherId  topics=0\n",
            OutputFormatter.listText(List.of(DR, EMPTY)));
        assertEquals("", OutputFormatter.listText(List.of()));
    }

    @Test
    void listJson() {
        assertEquals("{\n"
            + "  \"version\" : 1,\n"
            + "  \"mirrors\" : [ {\n"
            + "    \"name\" : \"dr\",\n"
            + "    \"sourceBootstrapServers\" : \"src1:9092,src2:9092\",\n"
            + "    \"sourceClusterId\" : \"SrcId\",\n"
            + "    \"topicCount\" : 2\n"
            + "  } ]\n"
            + "}\n", OutputFormatter.listJson(List.of(DR)));
        assertEquals("{\n  \"version\" : 1,\n  \"mirrors\" : [ ]\n}\n", OutputFormatter.listJson(List.of()));
    }

    @Test
    void describeTableShowsTruncationAndBarrierOnceSet() {
        assertEquals(
            "Mirror: dr\tSource: src1:9092,src2:9092\tSource cluster id: SrcId\tTopics: 2\n"
            + "Configs: mirror.fetch.max.bytes=1048576, sasl.jaas.config=[hidden]\n"
            + "TOPIC     PARTITION  STATE      SOURCE-END  DEST-END  LAG  LAG-MS  TRUNCATED  BARRIER  RETRY                                     "
            + "LAST-ERROR\n"
            + "orders    0          MIRRORING  1200        1200      0    0       -          -        -                                         -\n"
            + "orders    1          FAILED     900         850       50   1500    -          -        3 attempts, next at 1970-01-01T00:00:05Z  "
            + "SOURCE_TOPIC_CHANGED: source topic id changed (recreated?)\n"
            + "payments  0          STOPPED    40          41        0    250     [38,40)    40       -                                         -\n"
            + "payments  1          UNKNOWN    -           -         -    -       -          -        -                                         -\n"
            + "Last command per topic:\n"
            + "  payments: STOP at 1970-01-01T00:00:00Z (id c-7): stopping 1 topic(s) of mirror 'dr'\n"
            + "\n"
            + "Mirror: empty\tSource: other:9092\tSource cluster id: OtherId\tTopics: 0\n"
            + "(no topics)\n",
            OutputFormatter.describeTable(List.of(DR_DESCRIPTION, EMPTY_DESCRIPTION)));
    }

    @Test
    void describeTableWithoutStoppedPartitionsHasNoTruncationOrBarrierColumns() {
        ClusterMirrorDescription d = new ClusterMirrorDescription("dr", Map.of("bootstrap.servers", "s:9092"), "Id",
            List.of(new MirrorTopicDescription("t", DesiredState.MIRRORING, List.of(mirroring(0, 10, 7)))));
        assertEquals("Mirror: dr\tSource: s:9092\tSource cluster id: Id\tTopics: 1\n"
            + "TOPIC  PARTITION  STATE      SOURCE-END  DEST-END  LAG  LAG-MS  LAST-ERROR\n"
            + "t      0          MIRRORING  10          7         3    300     -\n",
            OutputFormatter.describeTable(List.of(d)));
    }

    @Test
    void describeJsonHasEveryFieldWithNullForUnknown() {
        ClusterMirrorDescription d = new ClusterMirrorDescription("dr",
            Map.of("bootstrap.servers", "s:9092", "ssl.key.password", "[hidden]"), "Id",
            List.of(new MirrorTopicDescription("payments", DesiredState.STOPPED, List.of(
                DR_DESCRIPTION.topics().get(1).partitions().get(0),
                DR_DESCRIPTION.topics().get(1).partitions().get(1)), DR_DESCRIPTION.topics().get(1).lastCommand(), List.of()),
                new MirrorTopicDescription("new", DesiredState.MIRRORING, List.of())));
        assertEquals("{\n"
            + "  \"version\" : 1,\n"
            + "  \"mirrors\" : [ {\n"
            + "    \"name\" : \"dr\",\n"
            + "    \"sourceBootstrapServers\" : \"s:9092\",\n"
            + "    \"sourceClusterId\" : \"Id\",\n"
            + "    \"configs\" : {\n"
            + "      \"bootstrap.servers\" : \"s:9092\",\n"
            + "      \"ssl.key.password\" : \"[hidden]\"\n"
            + "    },\n"
            + "    \"topics\" : [ {\n"
            + "      \"topic\" : \"payments\",\n"
            + "      \"desiredState\" : \"STOPPED\",\n"
            + "      \"lastCommand\" : {\n"
            + "        \"commandId\" : \"c-7\",\n"
            + "        \"operation\" : \"STOP\",\n"
            + "        \"appliedMs\" : 0,\n"
            + "        \"result\" : \"stopping 1 topic(s) of mirror 'dr'\"\n"
            + "      },\n"
            + "      \"heldChanges\" : [ ],\n"
            + "      \"partitions\" : [ {\n"
            + "        \"partition\" : 0,\n"
            + "        \"state\" : \"STOPPED\",\n"
            + "        \"sourceEndOffset\" : 40,\n"
            + "        \"destinationEndOffset\" : 41,\n"
            + "        \"lag\" : 0,\n"
            + "        \"lag_ms\" : 250,\n"
            + "        \"lastMirroredOffset\" : 39,\n"
            + "        \"lastMirroredEpoch\" : 5,\n"
            + "        \"lastError\" : null,\n"
            + "        \"barrierOffset\" : 40,\n"
            + "        \"truncatedFromOffset\" : 38,\n"
            + "        \"truncatedToOffset\" : 40,\n"
            + "        \"leaderId\" : 1,\n"
            + "        \"heldLogStarts\" : [ ]\n"
            + "      }, {\n"
            + "        \"partition\" : 1,\n"
            + "        \"state\" : \"UNKNOWN\",\n"
            + "        \"sourceEndOffset\" : null,\n"
            + "        \"destinationEndOffset\" : null,\n"
            + "        \"lag\" : null,\n"
            + "        \"lag_ms\" : null,\n"
            + "        \"lastMirroredOffset\" : null,\n"
            + "        \"lastMirroredEpoch\" : null,\n"
            + "        \"lastError\" : null,\n"
            + "        \"barrierOffset\" : null,\n"
            + "        \"truncatedFromOffset\" : null,\n"
            + "        \"truncatedToOffset\" : null,\n"
            + "        \"leaderId\" : null,\n"
            + "        \"heldLogStarts\" : [ ]\n"
            + "      } ]\n"
            + "    }, {\n"
            + "      \"topic\" : \"new\",\n"
            + "      \"desiredState\" : \"MIRRORING\",\n"
            + "      \"lastCommand\" : null,\n"
            + "      \"heldChanges\" : [ ],\n"
            + "      \"partitions\" : [ ]\n"
            + "    } ]\n"
            + "  } ]\n"
            + "}\n", OutputFormatter.describeJson(List.of(d)));
    }

    @Test
    void mirrorTopicsChanged() {
        assertEquals("Started mirroring 3 topics of mirror 'dr': a, b, c",
            OutputFormatter.mirrorTopicsChanged("Started", "dr", List.of("a", "b", "c")));
        assertEquals("Paused mirroring 1 topic of mirror 'dr': a",
            OutputFormatter.mirrorTopicsChanged("Paused", "dr", List.of("a")));
        assertEquals("Stopped mirroring 0 topics of mirror 'dr'",
            OutputFormatter.mirrorTopicsChanged("Stopped", "dr", List.of()));
    }
}
