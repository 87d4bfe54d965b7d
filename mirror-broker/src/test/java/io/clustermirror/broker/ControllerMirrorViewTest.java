package io.clustermirror.broker;

import org.apache.kafka.common.Endpoint;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Where a controller-only node reads the mirror state: no new mandatory config. */
class ControllerMirrorViewTest {
    private static final List<Endpoint> BROKERS = List.of(
        new Endpoint("INTERNAL", SecurityProtocol.SASL_SSL, "b1", 9093),
        new Endpoint("EXTERNAL", SecurityProtocol.SSL, "b1", 9094),
        new Endpoint("INTERNAL", SecurityProtocol.SASL_SSL, "b2", 9093),
        new Endpoint("EXTERNAL", SecurityProtocol.SSL, "b2", 9094));

    @Test
    void theBrokersInterBrokerListenerIsUsedWhenTheControllerNamesIt() {
        assertEquals(Optional.of("b1:9093,b2:9093"), ControllerMirrorView.bootstrapServers(Map.of(), BROKERS, "INTERNAL"));
    }

    @Test
    void otherwiseTheListenersOfTheLocalClientsSecurityProtocol() {
        assertEquals(Optional.of("b1:9094,b2:9094"), ControllerMirrorView.bootstrapServers(
            Map.of("cluster.mirror.local.security.protocol", "SSL"), BROKERS, "PLAINTEXT"));
        assertEquals(Optional.empty(), ControllerMirrorView.bootstrapServers(Map.of(), BROKERS, "PLAINTEXT"),
            "no PLAINTEXT listener: wait (or the explicit setting)");
    }

    @Test
    void anExplicitBootstrapWinsAndNoBrokerMeansNoneYet() {
        assertEquals(Optional.of("lb:9092"), ControllerMirrorView.bootstrapServers(
            Map.of("cluster.mirror.local.bootstrap.servers", " lb:9092 "), BROKERS, "INTERNAL"));
        assertEquals(Optional.empty(), ControllerMirrorView.bootstrapServers(Map.of(), List.of(), "PLAINTEXT"));
    }
}
