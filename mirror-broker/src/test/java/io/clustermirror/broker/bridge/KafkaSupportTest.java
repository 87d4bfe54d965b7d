package io.clustermirror.broker.bridge;

import io.clustermirror.common.batch.StoredBatch;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KafkaSupportTest {
    @Test
    void theBuildsOwnKafkaIsATestedReleaseWithEveryInternalPresent() {
        assertEquals(KafkaSupport.Verdict.TESTED, KafkaSupport.verdict(KafkaSupport.running()));
        List<String> warnings = new ArrayList<>();
        assertDoesNotThrow(() -> KafkaSupport.requireSupported(warnings::add));
        assertEquals(List.of(), warnings);
    }

    @Test
    void readsEveryKafkaReferenceOutOfOurClassFiles() {
        List<KafkaLinkage.Reference> references = KafkaLinkage.referencesOf("io/clustermirror/", KafkaSupport.class,
            StoredBatch.class);
        assertTrue(references.stream().anyMatch(r -> r.owner().equals("kafka.cluster.Partition")
            && "truncateTo".equals(r.member()) && r.usedBy().equals(BrokerHandle.class.getName())), "the truncation");
        assertTrue(references.stream().anyMatch(r -> r.usedBy().startsWith("io.clustermirror.common.")), "mirror-common's");
        assertTrue(references.stream().noneMatch(r -> r.owner().startsWith("java.")), "only Kafka's");
        assertEquals(List.of(), KafkaLinkage.missing(references, getClass().getClassLoader()));
    }

    @Test
    void aMemberWithAnotherDescriptorIsMissing() throws IOException {
        List<KafkaLinkage.Reference> fromBrokerHandle;
        try (InputStream in = BrokerHandle.class.getResourceAsStream("BrokerHandle.class")) {
            fromBrokerHandle = KafkaLinkage.parse(in.readAllBytes());
        }
        KafkaLinkage.Reference truncation = fromBrokerHandle.stream().filter(r -> "truncateTo".equals(r.member()))
            .findFirst().orElseThrow();
        // Another shape of the same member, as a Kafka release that changed a parameter's type would have it.
        KafkaLinkage.Reference otherShape = new KafkaLinkage.Reference(truncation.owner(), truncation.member(),
            truncation.descriptor().replace("(JZ)", "(IZ)"), truncation.usedBy());
        KafkaLinkage.Reference noSuchClass = new KafkaLinkage.Reference("org.apache.kafka.common.NoSuchThing", null, null,
            "io.clustermirror.Example");
        List<KafkaLinkage.Reference> missing = KafkaLinkage.missing(List.of(truncation, otherShape, noSuchClass),
            getClass().getClassLoader());
        assertEquals(List.of(noSuchClass, otherShape), missing, "in the order of their descriptions");

        IllegalStateException e = assertThrows(IllegalStateException.class,
            () -> KafkaSupport.require("4.3.1", missing, w -> { }));
        assertTrue(e.getMessage().startsWith("Kafka 4.3.1 lacks 2 internals Cluster Mirror "), e.getMessage());
        assertTrue(e.getMessage().contains("first " + noSuchClass.describe() + " (used by io.clustermirror.Example)"),
            e.getMessage());
        assertTrue(e.getMessage().contains("Run a tested Kafka release of the line, 4.3.1, 4.3.2"), e.getMessage());
    }

    @Test
    void anUnsupportedLineIsRefusedNamingTheSupportedOnes() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
            () -> KafkaSupport.require("3.9.1", List.of(), w -> { }));
        assertTrue(e.getMessage().contains("does not run on Kafka 3.9.1: it supports the Kafka lines "
            + KafkaSupport.supportedLines()), e.getMessage());
        assertEquals(KafkaSupport.Verdict.UNSUPPORTED_LINE, KafkaSupport.verdict("5.0.0"));
        assertEquals("4.0 (tested on 4.0.2), 4.1 (tested on 4.1.2), 4.2 (tested on 4.2.2), 4.3 (tested on 4.3.1, 4.3.2), 4.4 (tested on 4.4.0)",
            KafkaSupport.supportedLines());
    }

    @Test
    void anUntestedPatchReleaseStartsWithAWarningNamingTheTestedOnes() {
        List<String> warnings = new ArrayList<>();
        KafkaSupport.require("4.3.9", List.of(), warnings::add);
        assertEquals(1, warnings.size());
        assertTrue(warnings.get(0).contains("Kafka 4.3.9 is a patch release of the supported line 4.3")
            && warnings.get(0).contains("tested: 4.3.1, 4.3.2"), warnings.get(0));
        assertEquals("4.3", KafkaSupport.lineOf("4.3.0-rc1"));
    }
}
