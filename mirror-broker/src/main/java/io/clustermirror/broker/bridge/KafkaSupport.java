package io.clustermirror.broker.bridge;

import io.clustermirror.common.batch.StoredBatch;
import io.clustermirror.common.compat.KafkaClientShapes;
import org.apache.kafka.common.KafkaException;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * The Kafka releases this build of Cluster Mirror runs on, and the check a node makes before it starts. The extension
 * reaches into Kafka's internal classes, whose shapes change between releases without notice, so a node checks what it
 * actually needs rather than trusting a version string: every Kafka class, method and field our code refers to must
 * exist in the running Kafka ({@link KafkaLinkage}). On top of that, the release must belong to a supported minor line;
 * a patch release of such a line that the compatibility suite did not run on starts with a warning.
 */
public final class KafkaSupport {
    /** Each supported Kafka minor line, with the patch releases the compatibility suite passed on. */
    static final Map<String, List<String>> TESTED_RELEASES = new TreeMap<>(Map.of(
        "4.0", List.of("4.0.2"),
        "4.1", List.of("4.1.2"),
        "4.2", List.of("4.2.2"),
        "4.3", List.of("4.3.1", "4.3.2"),
        "4.4", List.of("4.4.0")));

    private static final String BUILD_PROPERTIES = "build.properties";
    /** Where every kafka-clients jar records its release (what Kafka's own version logging reads). */
    private static final String KAFKA_VERSION_RESOURCE = "/kafka/kafka-version.properties";

    private KafkaSupport() {
    }

    /** How this build stands to a Kafka release. */
    enum Verdict {
        /** A release the compatibility suite passed on. */
        TESTED,
        /** Another patch release of a supported line: it runs if every internal is there, with a warning. */
        UNTESTED_PATCH,
        /** A minor line this build does not support: refused. */
        UNSUPPORTED_LINE
    }

    /** This build's own version. */
    public static String clusterMirrorVersion() {
        try (InputStream in = KafkaSupport.class.getResourceAsStream(BUILD_PROPERTIES)) {
            if (in == null) {
                throw new IllegalStateException("Cluster Mirror's " + BUILD_PROPERTIES + " is missing from its jar: a broken build");
            }
            Properties props = new Properties();
            props.load(in);
            String value = props.getProperty("cluster.mirror.version");
            if (value == null || value.isBlank() || value.startsWith("${")) {
                throw new IllegalStateException("Cluster Mirror's " + BUILD_PROPERTIES + " has no version: a broken build");
            }
            return value.trim();
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read Cluster Mirror's " + BUILD_PROPERTIES, e);
        }
    }

    /**
     * The release of the Kafka jars this JVM runs, as the kafka-clients jar records it. Read from the jar's resource
     * rather than through a Kafka class, as the class that reports it moved between releases.
     */
    public static String running() {
        try (InputStream in = KafkaException.class.getResourceAsStream(KAFKA_VERSION_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("The Kafka on this node's classpath records no version (no "
                    + KAFKA_VERSION_RESOURCE + " in its kafka-clients jar): is it a Kafka build from a release?");
            }
            Properties props = new Properties();
            props.load(in);
            return props.getProperty("version", "unknown").trim();
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read the Kafka version", e);
        }
    }

    /** The minor line of a release: {@code 4.3} for {@code 4.3.2} or {@code 4.3.0-rc1}. */
    static String lineOf(String release) {
        String[] parts = release.split("[.-]");
        return parts.length < 2 ? release : parts[0] + "." + parts[1];
    }

    static Verdict verdict(String release) {
        List<String> tested = TESTED_RELEASES.get(lineOf(release));
        if (tested == null) {
            return Verdict.UNSUPPORTED_LINE;
        }
        return tested.contains(release) ? Verdict.TESTED : Verdict.UNTESTED_PATCH;
    }

    /** "4.3 (tested on 4.3.1)", the supported lines as messages name them. */
    public static String supportedLines() {
        return TESTED_RELEASES.entrySet().stream()
            .map(e -> e.getKey() + " (tested on " + String.join(", ", e.getValue()) + ")")
            .collect(Collectors.joining(", "));
    }

    /**
     * Refuses to start on a Kafka this build cannot run on, in one line naming what is missing and what to run instead;
     * warns through {@code warn} on a patch release of a supported line that was not tested.
     *
     * @throws IllegalStateException when the Kafka release belongs to an unsupported line, or lacks an internal we use
     */
    public static void requireSupported(Consumer<String> warn) {
        String release = running();
        require(release, KafkaLinkage.missing(KafkaLinkage.referencesOf("io/clustermirror/", KafkaSupport.class,
            StoredBatch.class), KafkaSupport.class.getClassLoader()), warn);
        try {
            KafkaClientShapes.check();
            ServerShapes.check();
        } catch (ExceptionInInitializerError e) {
            // The shapes bound by reflection: a supported line whose internals match none of the known shapes.
            throw new IllegalStateException("Kafka " + release + ": " + e.getCause().getMessage() + ". Run a tested Kafka"
                + " release, " + supportedLines(), e.getCause());
        }
    }

    /**
     * The Kafka internals the Cluster Mirror classes in {@code ourClasses} (the one jar, or class directories) refer to
     * that the Kafka classes {@code kafka} loads lack, one description each ({@code owner.member(descriptor) (used by
     * ...)}), in a stable order; empty when that Kafka has every one. For the compatibility suite, which checks other
     * Kafka releases from the outside.
     */
    public static List<String> missingInternals(Collection<Path> ourClasses, ClassLoader kafka) {
        return KafkaLinkage.missing(KafkaLinkage.referencesIn("io/clustermirror/", ourClasses), kafka).stream()
            .map(r -> r.describe() + " (used by " + r.usedBy() + ")").toList();
    }

    /** Every release the compatibility suite passed on, oldest line first. */
    public static List<String> testedReleases() {
        return TESTED_RELEASES.values().stream().flatMap(List::stream).toList();
    }

    /** True if {@code release} belongs to a Kafka line this build supports (tested or not). */
    public static boolean supportsLine(String release) {
        return verdict(release) != Verdict.UNSUPPORTED_LINE;
    }

    static void require(String release, List<KafkaLinkage.Reference> missing, Consumer<String> warn) {
        Verdict verdict = verdict(release);
        if (verdict == Verdict.UNSUPPORTED_LINE) {
            throw new IllegalStateException("Cluster Mirror " + clusterMirrorVersion() + " does not run on Kafka " + release
                + ": it supports the Kafka lines " + supportedLines() + ". Run a release of one of those lines, or the Cluster"
                + " Mirror release that supports Kafka " + lineOf(release));
        }
        if (!missing.isEmpty()) {
            KafkaLinkage.Reference first = missing.get(0);
            throw new IllegalStateException("Kafka " + release + " lacks " + missing.size() + " internal" + (missing.size() == 1
                ? "" : "s") + " Cluster Mirror " + clusterMirrorVersion() + " uses, first " + first.describe() + " (used by "
                + first.usedBy() + "). Run a tested Kafka release of the line, " + String.join(", ",
                TESTED_RELEASES.get(lineOf(release))) + ", or a Cluster Mirror release tested on Kafka " + release);
        }
        if (verdict == Verdict.UNTESTED_PATCH) {
            warn.accept("Kafka " + release + " is a patch release of the supported line " + lineOf(release) + " that Cluster"
                + " Mirror " + clusterMirrorVersion() + " was not tested on (tested: " + String.join(", ",
                TESTED_RELEASES.get(lineOf(release))) + "). Every Kafka internal it uses is present; test this release before "
                + "production");
        }
    }
}
