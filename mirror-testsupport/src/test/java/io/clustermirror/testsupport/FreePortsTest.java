package io.clustermirror.testsupport;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertTrue;

class FreePortsTest {

    @Test
    void portsAreBelowTheEphemeralRangeAndNeverHandedOutTwice() {
        int ephemeralLow = FreePorts.ephemeralLow();
        Set<Integer> ports = new HashSet<>();
        for (int i = 0; i < 200; i++) {
            int port = FreePorts.next();
            assertTrue(port >= 1024 && port < ephemeralLow, port + " is not in [1024, " + ephemeralLow + ")");
            assertTrue(ports.add(port), "port " + port + " handed out twice");
        }
    }
}
