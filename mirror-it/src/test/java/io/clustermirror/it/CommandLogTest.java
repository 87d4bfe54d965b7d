package io.clustermirror.it;

import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.records.CommandOp;
import io.clustermirror.common.records.MirrorCommand;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.testkit.MirrorTestCluster;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The command log is a topic that anyone allowed to write it can fill with anything. A record the controller cannot
 * apply (no operation, no command id, not even JSON) must cost only that record: the commands after it are processed.
 */
class CommandLogTest {
    private static ClusterPair clusters;

    @BeforeAll
    static void startClusters() throws Exception {
        clusters = ClusterPair.start(MirrorTestCluster.builder().name("commands-source"),
            MirrorTestCluster.builder().name("commands-destination"));
    }

    @AfterAll
    static void stopClusters() throws Exception {
        if (clusters != null) {
            clusters.close();
        }
    }

    @Test
    void recordsTheControllerCannotApplyDoNotStopTheCommandsAfterThem() throws Exception {
        clusters.mirrors.createClusterMirror("before", MirrorAssertions.mirrorConfig(clusters.source)).all().get();
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(clusters.destination.bootstrapServers(), Map.of())) {
            List<byte[]> unusable = List.of(
                RecordCodec.encodeCommand(new MirrorCommand("no-op", null, "before", Map.of(), List.of(), List.of(), 1L)),
                RecordCodec.encodeCommand(new MirrorCommand(null, CommandOp.DELETE, "before", Map.of(), List.of(), List.of(), 1L)),
                RecordCodec.encodeCommand(new MirrorCommand("no-mirror", CommandOp.STOP, null, Map.of(), List.of("t"), List.of(), 1L)),
                Workloads.bytes("not json at all"));
            for (byte[] value : unusable) {
                producer.send(new ProducerRecord<>(InternalTopics.COMMANDS, 0, null, value)).get();
            }
        }
        clusters.mirrors.createClusterMirror("after", MirrorAssertions.mirrorConfig(clusters.source)).all().get();
        assertEquals(Set.of("before", "after"), Set.copyOf(clusters.mirrors.listClusterMirrors().names().get()),
            "the command without an id deleted nothing, and the one after the bad records was applied");
    }
}
