package io.clustermirror.it;

import io.clustermirror.testkit.LaunchedNode;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The one jar dropped into stock Kafka installations of other releases (kafka-releases/kafka-&lt;version&gt;/target/libs),
 * started with the README's lines on launched nodes: a patch release of a supported line that was not tested starts
 * with a WARN naming the tested releases, and a release of an unsupported line is refused at start in one line naming
 * the supported lines, never with a stack trace of a missing Kafka class.
 */
@Tag(ProcessCluster.TAG)
class KafkaReleasesDropInTest {
    private static Path libsOf(String release) {
        return LaunchedNode.findCheckout().resolve("kafka-releases/kafka-" + release + "/target/libs");
    }

    /** The end of a node's output, for a failure message. */
    private static String last(String output) {
        return output.substring(Math.max(0, output.length() - 4000));
    }

    @Test
    void anUntestedPatchReleaseOfASupportedLineStartsWithAWarning() throws Exception {
        try (ProcessCluster cluster = ProcessCluster.startDropInOn("kafka-4-3-2", 1, libsOf("4.3.2"))) {
            String output = cluster.outputSinceLastStart(1);
            assertTrue(output.contains("Kafka 4.3.2 is a patch release of the supported line 4.3 that Cluster Mirror")
                && output.contains("was not tested on (tested: 4.3.1)"), last(output));
            assertTrue(output.contains("agent on Kafka 4.3.2"), last(output));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"4.4.0", "4.2.2"})
    void aReleaseOfAnUnsupportedLineIsRefusedNamingTheSupportedOnes(String release) throws Exception {
        String output = ProcessCluster.startRefusedOn("kafka-" + release.replace('.', '-'), libsOf(release));
        assertTrue(output.contains("ERROR: Cluster Mirror ") && output.contains(" does not run on Kafka " + release
            + ": it supports the Kafka lines 4.3 (tested on 4.3.1)"), last(output));
        assertFalse(output.contains("NoClassDefFoundError") || output.contains("NoSuchMethodError"), last(output));
    }
}
