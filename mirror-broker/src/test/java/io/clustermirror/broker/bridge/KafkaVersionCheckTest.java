package io.clustermirror.broker.bridge;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KafkaVersionCheckTest {
    @Test
    void theBuildIsForTheKafkaItRunsOn() {
        assertEquals(KafkaVersionCheck.running(), KafkaVersionCheck.builtFor());
        assertDoesNotThrow(KafkaVersionCheck::requireBuiltFor);
    }

    @Test
    void anotherKafkaReleaseIsRefusedNamingBothVersions() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> KafkaVersionCheck.require("4.3.1", "4.4.0"));
        assertTrue(e.getMessage().contains("is built for Kafka 4.3.1 but this node runs Kafka 4.4.0"), e.getMessage());
    }
}
