package io.clustermirror.it;

import io.clustermirror.testsupport.ClusterTopology;
import io.clustermirror.broker.bridge.KafkaSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The one jar dropped into stock Kafka installations of other releases (kafka-releases/kafka-&lt;version&gt;/target/libs),
 * started with the drop-in lines of docs/operations.md on launched nodes: a patch release of a supported line that was not tested starts
 * with a WARN naming the tested releases, and a release of an unsupported line is refused at start in one line naming
 * the supported lines, never with a stack trace of a missing Kafka class. The untested patch release is 4.4.0 relabelled
 * 4.4.9, as no untested one is out; the newer line is 4.4.0 relabelled 4.5.0.
 */
@Tag(ProcessCluster.TAG)
class KafkaReleasesDropInTest {
    /** The node's lines about Cluster Mirror and the Kafka release, or the end of its output, for a failure message. */
    private static String last(String output) {
        String ours = output.lines().filter(l -> l.contains("Cluster Mirror") || l.contains("Kafka version")
            || l.contains("ERROR")).limit(40).collect(java.util.stream.Collectors.joining("\n"));
        return ours.isEmpty() ? output.substring(Math.max(0, output.length() - 4000)) : ours;
    }

    @Test
    void anUntestedPatchReleaseOfASupportedLineStartsWithAWarning() throws Exception {
        KafkaReleases.relabeled("4.4.0", "4.4.9");
        try (ProcessCluster cluster = ProcessCluster.start(ProcessCluster.topology("kafka-4-4-9").combined(1)
                .launchMode(ClusterTopology.LaunchMode.DROP_IN).kafkaRelease("4.4.9").build())) {
            String output = cluster.outputSinceLastStart(1);
            assertTrue(output.contains("Kafka 4.4.9 is a patch release of the supported line 4.4 that Cluster Mirror")
                && output.contains("was not tested on (tested: 4.4.0)"), last(output));
            assertTrue(output.contains("agent on Kafka 4.4.9"), last(output));
        }
    }

    /**
     * A line older than every supported one (3.9, the last before 4.0), whose internals really differ: no missing class may
     * escape as a stack trace.
     */
    @Test
    void aReleaseOfAnOlderLineIsRefusedNamingTheSupportedOnes() throws Exception {
        assertRefused("3.9.1", refusedOn("kafka-3-9-1", "3.9.1"));
    }

    /** A line newer than this build (4.4.0 relabelled 4.5.0): refused, though every internal may be there. */
    @Test
    void aReleaseOfANewerLineIsRefusedNamingTheSupportedOnes() throws Exception {
        KafkaReleases.relabeled("4.4.0", "4.5.0");
        assertRefused("4.5.0", refusedOn("kafka-4-5-0", "4.5.0"));
    }

    /** Formats and starts one combined node the drop-in way on Kafka {@code release}, which must refuse to start: its output. */
    private static String refusedOn(String name, String release) throws Exception {
        return ProcessCluster.startRefused(ProcessCluster.topology(name).combined(1).kafkaRelease(release).build(), true);
    }

    private static void assertRefused(String release, String output) {
        assertTrue(output.contains("ERROR: Cluster Mirror ") && output.contains(" does not run on Kafka " + release
            + ": it supports the Kafka lines " + KafkaSupport.supportedLines()), last(output));
        assertFalse(output.contains("NoClassDefFoundError") || output.contains("NoSuchMethodError"), last(output));
    }
}
