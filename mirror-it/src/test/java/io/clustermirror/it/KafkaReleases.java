package io.clustermirror.it;

import io.clustermirror.broker.bridge.KafkaSupport;
import io.clustermirror.testsupport.LaunchedNode;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;

/**
 * The stock Kafka installations the build collects ({@code kafka-releases/kafka-<version>/target/libs}, a release's
 * {@code libs/}) that the compatibility tests run the one jar on.
 */
final class KafkaReleases {
    /** Which releases {@link #others} are instead of the tested ones (comma-separated): the compatibility check's choice. */
    static final String RELEASES_PROPERTY = "cluster.mirror.kafka.releases";

    private KafkaReleases() {
    }

    /**
     * The releases to run the compatibility tests on: those named by {@value #RELEASES_PROPERTY}, else every release the
     * build declares tested but the build's own Kafka (which every other test runs on).
     */
    static List<String> others() {
        String chosen = System.getProperty(RELEASES_PROPERTY, "").trim();
        if (!chosen.isEmpty()) {
            return Arrays.stream(chosen.split(",")).map(String::trim).filter(r -> !r.isEmpty()).toList();
        }
        String build = KafkaSupport.running();
        return KafkaSupport.testedReleases().stream().filter(r -> !r.equals(build)).toList();
    }

    /**
     * The {@code libs/} of the release's installation: for the build's own Kafka, the one the build collects next to the
     * one jar; else {@code kafka-releases/kafka-<release>} (the 4.x releases) or {@code old-kafka/kafka-<release>} (older
     * sources), or a release {@link #relabeled} wrote. Fails naming the build step if it was not collected.
     */
    static Path libsOf(String release) {
        Path checkout = LaunchedNode.findCheckout();
        if (release.equals(KafkaSupport.running())) {
            return checkout.resolve("mirror-server/target/kafka-libs");
        }
        for (Path libs : List.of(checkout.resolve("kafka-releases/kafka-" + release + "/target/libs"),
                checkout.resolve("old-kafka/kafka-" + release + "/target/libs"), relabeledLibs(release))) {
            if (Files.isDirectory(libs)) {
                return libs;
            }
        }
        throw new IllegalStateException("Kafka " + release + " is not collected in kafka-releases/ or old-kafka/: add"
            + " kafka-releases/kafka-" + release + " (bin/compat-check.sh does) and run 'mvn -B install -DskipTests'");
    }

    /**
     * The installation of {@code release} with its jars saying it is {@code asRelease}: every class the same, only the
     * recorded release differs, as in a patch release that changed no internal Cluster Mirror uses.
     * Written once under {@code mirror-it/target}.
     */
    static Path relabeled(String release, String asRelease) {
        Path libs = relabeledLibs(asRelease);
        try {
            if (Files.isDirectory(libs)) {
                return libs;
            }
            Path tmp = Files.createDirectories(libs.resolveSibling("libs.tmp"));
            try (Stream<Path> jars = Files.list(libsOf(release))) {
                for (Path jar : jars.toList()) {
                    relabel(jar, tmp.resolve(jar.getFileName().toString()), asRelease);
                }
            }
            Files.move(tmp, libs);
            return libs;
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write the relabelled Kafka " + asRelease + " at " + libs, e);
        }
    }

    /** Where {@link #relabeled} writes the installation that says it is {@code release}. */
    private static Path relabeledLibs(String release) {
        return LaunchedNode.findCheckout().resolve("mirror-it/target/kafka-relabeled-" + release + "/libs");
    }

    /** Copies a jar, with the release it records (as every Kafka module jar does) replaced by {@code asRelease}. */
    private static void relabel(Path from, Path to, String asRelease) throws IOException {
        try (ZipInputStream in = new ZipInputStream(Files.newInputStream(from));
             OutputStream file = Files.newOutputStream(to);
             ZipOutputStream out = new ZipOutputStream(file)) {
            for (ZipEntry entry = in.getNextEntry(); entry != null; entry = in.getNextEntry()) {
                out.putNextEntry(new ZipEntry(entry.getName()));
                if (entry.getName().equals("kafka/kafka-version.properties")) {
                    out.write(("version=" + asRelease + "\ncommitId=relabelled\n").getBytes(StandardCharsets.UTF_8));
                } else {
                    in.transferTo(out);
                }
                out.closeEntry();
            }
        }
    }

    /** {@code 4-4-0} for {@code 4.4.0}: for cluster, topic and mirror names. */
    static String dashed(String release) {
        return release.replace('.', '-');
    }
}
