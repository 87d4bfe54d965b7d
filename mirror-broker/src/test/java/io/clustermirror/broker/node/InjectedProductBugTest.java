package io.clustermirror.broker.node;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The product carries no test-only product bug, and nothing in it turns one on. */
class InjectedProductBugTest {
    @Test
    void theProductHasNoImplementationOfTheSeam() {
        assertTrue(InjectedProductBug.injected().isEmpty(), "only a test agent puts one on the class path");
    }

    /** The switch of earlier builds, a JVM property named clustermirror.testonly.inject.product.bug, is read by no class. */
    @Test
    void noProductClassReadsATestOnlyProductBugProperty() throws IOException, URISyntaxException {
        Path classes = Path.of(InjectedProductBug.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        assertTrue(Files.isDirectory(classes), "the module's classes: " + classes);
        try (Stream<Path> files = Files.walk(classes)) {
            List<Path> readers = files.filter(f -> f.toString().endsWith(".class")).filter(InjectedProductBugTest::namesTheProperty).toList();
            assertEquals(List.of(), readers);
        }
    }

    private static boolean namesTheProperty(Path classFile) {
        try {
            return new String(Files.readAllBytes(classFile), StandardCharsets.ISO_8859_1).contains("inject.product.bug");
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
