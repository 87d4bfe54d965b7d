package io.clustermirror.it;

import io.clustermirror.broker.bridge.KafkaSupport;
import io.clustermirror.testsupport.LaunchedNode;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every Kafka internal the one jar refers to, resolved against each Kafka release the build collects
 * ({@code kafka-releases/kafka-<version>/target/libs}, a stock installation's libs/) in a class loader of its own: a
 * release of a line the build declares supported must have every one (a node on it would start and find them), and a
 * release of another line is the list of what a port to it must change. The table is written to
 * {@code target/kafka-releases-linkage.txt}.
 */
class KafkaReleasesLinkageTest {
    @Test
    void everySupportedLineHasEveryInternalTheOneJarUses() throws IOException {
        Path checkout = LaunchedNode.findCheckout();
        Path oneJar = oneJar(checkout);
        List<Path> releases;
        try (Stream<Path> dirs = Files.list(checkout.resolve("kafka-releases"))) {
            releases = dirs.map(d -> d.resolve("target/libs")).filter(Files::isDirectory).sorted().toList();
        }
        assertFalse(releases.isEmpty(), "no Kafka release collected under kafka-releases/*/target/libs: run 'mvn -B install' first");

        List<String> table = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        for (Path libs : releases) {
            try (URLClassLoader kafka = new URLClassLoader(jars(libs), ClassLoader.getPlatformClassLoader())) {
                String release = versionOf(kafka);
                List<String> missing = KafkaSupport.missingInternals(List.of(oneJar), kafka);
                boolean supported = KafkaSupport.supportsLine(release);
                table.add(release + "\t" + (supported ? "supported" : "unsupported") + "\t" + missing.size() + " missing"
                    + (missing.isEmpty() ? "" : "\n\t" + String.join("\n\t", missing)));
                if (supported && !missing.isEmpty()) {
                    failures.add("Kafka " + release + " is of a supported line but lacks " + missing.size() + ": " + missing);
                }
                String shapes = clientShapesOn(oneJar, libs);
                table.add("\tclient shapes: " + shapes);
                if (!shapes.equals("bound")) {
                    failures.add("Kafka " + release + ": the client shapes do not bind: " + shapes);
                }
                if (!supported) {
                    assertFalse(missing.isEmpty(), "Kafka " + release + " has every internal the one jar uses: declare its line"
                        + " supported once the smoke suite passes on it");
                }
            }
        }
        Files.write(checkout.resolve("mirror-it/target/kafka-releases-linkage.txt"), table, StandardCharsets.UTF_8);
        assertEquals(List.of(), failures);
    }

    @Test
    void theBuildsOwnKafkaHasEveryInternal() throws IOException {
        Path checkout = LaunchedNode.findCheckout();
        try (URLClassLoader kafka = new URLClassLoader(jars(checkout.resolve("mirror-server/target/kafka-libs")),
                ClassLoader.getPlatformClassLoader())) {
            assertTrue(KafkaSupport.supportsLine(versionOf(kafka)));
            assertEquals(List.of(), KafkaSupport.missingInternals(List.of(oneJar(checkout)), kafka));
        }
    }

    /**
     * Whether {@code KafkaClientShapes} binds every shape it knows on the release: it must on every release of 4.0-4.4,
     * as the shapes are what differs between them. Loaded with the one jar over the release's libs, as a node would.
     */
    private static String clientShapesOn(Path oneJar, Path libs) throws IOException {
        URL[] kafka = jars(libs);
        URL[] all = new URL[kafka.length + 1];
        all[0] = url(oneJar);
        System.arraycopy(kafka, 0, all, 1, kafka.length);
        try (URLClassLoader node = new URLClassLoader(all, ClassLoader.getPlatformClassLoader())) {
            Class.forName("io.clustermirror.common.compat.KafkaClientShapes", true, node);
            return "bound";
        } catch (ClassNotFoundException | ExceptionInInitializerError | NoClassDefFoundError e) {
            return String.valueOf(e.getCause() != null ? e.getCause() : e);
        }
    }

    private static Path oneJar(Path checkout) throws IOException {
        try (Stream<Path> files = Files.list(checkout.resolve("mirror-server/target"))) {
            return files.filter(f -> f.getFileName().toString().matches("cluster-mirror-.*\\.jar")).findFirst()
                .orElseThrow(() -> new IllegalStateException("no one jar in mirror-server/target: run 'mvn -B install' first"));
        }
    }

    private static URL[] jars(Path libs) throws IOException {
        try (Stream<Path> files = Files.list(libs)) {
            return files.filter(f -> f.toString().endsWith(".jar")).sorted().map(KafkaReleasesLinkageTest::url).toArray(URL[]::new);
        }
    }

    private static URL url(Path jar) {
        try {
            return jar.toUri().toURL();
        } catch (MalformedURLException e) {
            throw new IllegalArgumentException(jar.toString(), e);
        }
    }

    /** The release the kafka-clients jar of {@code kafka} records. */
    private static String versionOf(ClassLoader kafka) throws IOException {
        try (InputStream in = kafka.getResourceAsStream("kafka/kafka-version.properties")) {
            Properties props = new Properties();
            props.load(in);
            return props.getProperty("version");
        }
    }
}
