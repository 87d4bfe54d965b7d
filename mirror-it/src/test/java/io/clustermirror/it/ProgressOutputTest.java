package io.clustermirror.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.clustermirror.common.PartitionState;
import io.clustermirror.testkit.MirrorTestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The progress of the long operations as {@code bin/kafka-cluster-mirrors.sh} shows it, run as its own process: on a
 * terminal (a pseudo-terminal of util-linux {@code script}) one line redrawn in place with a carriage return, for
 * {@code --start --wait} and {@code --verify}; through pipes no carriage return and no progress on stdout; with
 * {@code --json} a stdout that is the JSON document alone, on a terminal too. And {@code --start --wait} returns only
 * once every partition of the started topics is MIRRORING with all the source holds, or exits 1 at its timeout naming
 * those behind.
 */
@Tag(ProcessCluster.TAG)
@MirrorClusterTest(source = "progress-source", destination = "progress-destination")
class ProgressOutputTest {
    private static final String MIRROR = "progress";
    private static final int PARTITIONS = 3;
    /**
     * Long enough for the start, the new destination topic's first leader and the first reads of both sides on a busy
     * machine (6 s was not always): the wait must end on what it read, not on a side it could not read yet.
     */
    private static final int WAIT_MS = 15_000;
    /** A progress line drawn in place: a carriage return that starts a line rather than ends one. */
    private static final Pattern CATCHING_UP = inPlace("Catching up", "behind");
    private static final Pattern VERIFYING = inPlace("Verifying", "to compare");
    private static ClusterPair<MirrorTestCluster, MirrorTestCluster> clusters;

    @BeforeAll
    static void createTheMirror() throws Exception {
        clusters.mirrors.createClusterMirror(MIRROR, MirrorAssertions.mirrorConfig(clusters.source)).all().get();
    }

    private static Pattern inPlace(String activity, String remainingWhat) {
        return Pattern.compile("\r" + activity + ": \\d+/" + PARTITIONS + " partitions, [\\d,]+ offsets " + remainingWhat
            + ", ETA \\S+, elapsed \\S+");
    }

    /** A source topic of {@link #PARTITIONS} partitions with records of every producer kind in each. */
    private static void createWithRecords(String topic) throws Exception {
        Workloads.createTopic(clusters.source, topic, PARTITIONS, Map.of());
        Workloads.writeAllKinds(clusters.source.bootstrapServers(), topic, PARTITIONS, 20);
    }

    /** Fails unless every partition of the topic is MIRRORING and holds the source's end now, without waiting for it. */
    private static void assertCaughtUpNow(String topic) throws Exception {
        try (Admin source = clusters.source.admin(); Admin destination = clusters.destination.admin()) {
            for (int p = 0; p < PARTITIONS; p++) {
                TopicPartition tp = new TopicPartition(topic, p);
                assertEquals(PartitionState.MIRRORING, MirrorAssertions.describe(clusters.mirrors, MIRROR, topic, p).state(), tp.toString());
                assertEquals(MirrorAssertions.endOffset(source, tp), MirrorAssertions.committedEnd(destination, tp), tp.toString());
            }
        }
    }

    @Test
    void onATerminalStartWaitAndVerifyDrawTheirProgressInPlace() throws Exception {
        String topic = "progress-terminal";
        createWithRecords(topic);
        String bootstrap = clusters.destination.bootstrapServers();

        CliRun start = CliRun.onTerminal(bootstrap, "--start", "--mirror", MIRROR, "--topics", topic, "--wait", "--timeout-ms", "60000");
        assertEquals(0, start.exit(), start.describe());
        assertTrue(CATCHING_UP.matcher(start.out()).find(), start.describe());
        assertTrue(start.out().contains("Every partition of them is MIRRORING and has caught up with the source."), start.describe());
        assertCaughtUpNow(topic);

        CliRun verify = CliRun.onTerminal(bootstrap, "--verify", "--mirror", MIRROR, "--topics", topic);
        assertEquals(0, verify.exit(), verify.describe());
        assertTrue(VERIFYING.matcher(verify.out()).find(), verify.describe());
        assertTrue(verify.out().contains(PARTITIONS + " of " + PARTITIONS + " partition(s) identical."), verify.describe());

        // The terminal shows stdout and stderr together: with --json it gets the JSON document and nothing else.
        CliRun json = CliRun.onTerminal(bootstrap, "--verify", "--mirror", MIRROR, "--topics", topic, "--json");
        assertEquals(0, json.exit(), json.describe());
        String screen = json.out().replace("\r\n", "\n");
        assertFalse(screen.contains("\r") || screen.contains("Verifying"), json.describe());
        assertTrue(new ObjectMapper().readTree(screen).get("identical").asBoolean(), json.describe());
    }

    @Test
    void throughPipesStdoutHasNoProgressAndJsonIsTheDocumentAlone() throws Exception {
        String topic = "progress-piped";
        createWithRecords(topic);
        String bootstrap = clusters.destination.bootstrapServers();

        CliRun start = CliRun.piped(bootstrap, "--start", "--mirror", MIRROR, "--topics", topic, "--wait", "--timeout-ms", "60000");
        assertEquals(0, start.exit(), start.describe());
        assertEquals("Started mirroring 1 topic of mirror '" + MIRROR + "': " + topic + "\n"
            + "Every partition of them is MIRRORING and has caught up with the source.\n", start.out());
        assertFalse(start.err().contains("\r"), start.describe());
        assertCaughtUpNow(topic);

        CliRun verify = CliRun.piped(bootstrap, "--verify", "--mirror", MIRROR, "--topics", topic);
        assertEquals(0, verify.exit(), verify.describe());
        assertFalse(verify.out().contains("\r") || verify.out().contains("Verifying"), verify.describe());
        assertFalse(verify.err().contains("\r"), verify.describe());

        CliRun json = CliRun.piped(bootstrap, "--verify", "--mirror", MIRROR, "--topics", topic, "--json");
        assertEquals(0, json.exit(), json.describe());
        assertFalse(json.out().contains("\r") || json.out().contains("Verifying"), json.describe());
        JsonNode root = new ObjectMapper().readTree(json.out());
        assertTrue(root.get("identical").asBoolean(), json.out());
        assertEquals(PARTITIONS, root.get("partitions").size(), json.out());
        assertFalse(json.err().contains("Verifying"), json.describe());
    }

    @Test
    void aStartWaitThatTimesOutExitsOneNamingThePartitionsBehindAndLeavesThemStarted() throws Exception {
        String topic = "progress-open-transaction";
        Workloads.createTopic(clusters.source, topic, 1, Map.of());
        try (KafkaProducer<byte[], byte[]> transactional = Workloads.producer(clusters.source.bootstrapServers(),
                Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "progress-open"))) {
            transactional.initTransactions();
            transactional.beginTransaction();
            transactional.send(new ProducerRecord<>(topic, 0, null, Workloads.bytes("open"))).get();
            // The mirror fetches read_committed: it stops at the open transaction, one offset short of the source's end.
            CliRun start = CliRun.piped(clusters.destination.bootstrapServers(), "--start", "--mirror", MIRROR, "--topics", topic,
                "--wait", "--timeout-ms", String.valueOf(WAIT_MS));
            assertEquals(1, start.exit(), start.describe());
            assertEquals("", start.out(), start.describe());
            assertTrue(start.err().contains("MIRROR_TOPIC_NOT_CAUGHT_UP: 1 partition(s) had not caught up with the source after "
                + WAIT_MS + " ms; the topics were started and go on mirroring: " + topic + "-0 ("), start.describe());
            assertTrue(start.err().contains("1 offset(s)") && start.err().contains("a transaction is open on the source"),
                start.describe());
            transactional.abortTransaction();
        }
        MirrorAssertions.awaitState(clusters.mirrors, MIRROR, topic, 1, PartitionState.MIRRORING);
    }
}
