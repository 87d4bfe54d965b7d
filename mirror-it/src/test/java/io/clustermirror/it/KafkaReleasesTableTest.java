package io.clustermirror.it;

import io.clustermirror.broker.bridge.KafkaSupport;
import io.clustermirror.testsupport.LaunchedNode;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The compatibility table of docs/KAFKA-RELEASES.md says what the build and its tests say: a release is "tested" as a
 * destination exactly when the build declares it tested (and then the smoke, launcher and linkage tests run on it),
 * "refused" exactly when its line is unsupported, and "tested" as a source only where a test mirrors from it: a
 * {@code Kafka<major><minor>SourceTest}, the failback of the smoke suite (a tested release other than the build's), or
 * the full suite (the build's own).
 */
class KafkaReleasesTableTest {
    private static final String DOC = "docs/KAFKA-RELEASES.md";
    private static final String HEADER = "| Kafka release | destination, drop-in | destination, launcher |";

    @Test
    void theCompatibilityTableMatchesTheTestedReleasesAndTheTests() throws IOException {
        Map<String, List<String>> rows = rows();
        List<String> problems = new ArrayList<>();
        for (String release : KafkaSupport.testedReleases()) {
            if (!rows.containsKey(release)) {
                problems.add(release + ": a tested release without a row");
            }
        }
        String build = KafkaSupport.running();
        rows.forEach((release, cells) -> {
            boolean tested = KafkaSupport.testedReleases().contains(release);
            String destination = tested ? "tested" : KafkaSupport.supportsLine(release) ? "untested" : "refused";
            for (int column : new int[] {1, 2}) {
                if (!cells.get(column).equals(destination)) {
                    problems.add(release + ": column " + (column + 1) + " says '" + cells.get(column) + "', the build says "
                        + destination);
                }
            }
            String source = cells.get(4);
            if (source.startsWith("tested")) {
                String evidence = sourceTestOf(release) != null ? "tested" + (source.contains("ZooKeeper") ? " (ZooKeeper)" : "")
                    : release.equals(build) ? "tested (the full suite)"
                    : tested ? "tested (failback)" : null;
                if (!source.equals(evidence)) {
                    problems.add(release + ": the source column says '" + source + "', the tests show " + evidence);
                }
            }
        });
        assertEquals(List.of(), problems, "the table in " + DOC + " and the build disagree");
    }

    /** The test class that mirrors from a source of {@code release}, if there is one. */
    private static Class<?> sourceTestOf(String release) {
        String[] parts = release.split("\\.");
        try {
            return Class.forName("io.clustermirror.it.Kafka" + parts[0] + parts[1] + "SourceTest");
        } catch (ClassNotFoundException e) {
            return null;
        }
    }

    /** The rows of the compatibility table by release, each row's cells trimmed. */
    private static Map<String, List<String>> rows() throws IOException {
        List<String> lines = Files.readAllLines(LaunchedNode.findCheckout().resolve(DOC), StandardCharsets.UTF_8);
        int header = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith(HEADER)) {
                header = i;
            }
        }
        assertTrue(header >= 0, DOC + " has no compatibility table starting " + HEADER);
        Map<String, List<String>> rows = new TreeMap<>();
        for (int i = header + 2; i < lines.size() && lines.get(i).startsWith("|"); i++) {
            String line = lines.get(i);
            List<String> cells = List.of(line.substring(1, line.length() - 1).split("\\|")).stream().map(String::trim).toList();
            assertEquals(5, cells.size(), "a row of five cells: " + line);
            rows.put(cells.get(0), cells);
        }
        return rows;
    }
}
