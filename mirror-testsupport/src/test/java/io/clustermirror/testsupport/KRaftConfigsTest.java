package io.clustermirror.testsupport;

import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

class KRaftConfigsTest {
    @Test
    void aStaticQuorumNamesEveryVoterAndAdvertisesOnlyTheBrokersListeners() {
        ClusterTopology topology = ClusterTopology.builder("static").dedicated(2, 3).serverProperty("num.partitions", "4").build();
        ListenerPorts ports = ListenerPorts.allocate(topology);
        Map<String, String> controller = KRaftConfigs.serverProperties(topology, topology.node(1), ports);
        Map<String, String> broker = KRaftConfigs.serverProperties(topology, topology.node(3), ports);

        String voters = "1@localhost:" + ports.port(1, "CONTROLLER") + ",2@localhost:" + ports.port(2, "CONTROLLER");
        assertEquals(voters, controller.get("controller.quorum.voters"));
        assertEquals(voters, broker.get("controller.quorum.voters"));
        assertEquals("CONTROLLER://localhost:" + ports.port(1, "CONTROLLER"), controller.get("listeners"));
        assertFalse(controller.containsKey("advertised.listeners"), "a static voter advertises nothing");
        assertEquals("PLAINTEXT://localhost:" + ports.port(3, "PLAINTEXT"), broker.get("listeners"));
        assertEquals(broker.get("listeners"), broker.get("advertised.listeners"));
        assertEquals("PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT", broker.get("listener.security.protocol.map"));
        assertEquals("3", broker.get("default.replication.factor"));
        assertEquals("2", broker.get("transaction.state.log.min.isr"));
        assertEquals("4", broker.get("num.partitions"), "the topology's own properties win");
    }

    @Test
    void aStandaloneQuorumAdvertisesTheControllerAndAListenerCanBeAdvertisedBehindAProxy() {
        ClusterTopology topology = ClusterTopology.builder("standalone").node(1, NodeRole.COMBINED).node(2, NodeRole.BROKER)
            .quorum(ClusterTopology.Quorum.STANDALONE)
            .listener("INTERNAL", SecurityProtocol.PLAINTEXT)
            .listener("CLIENT", SecurityProtocol.SSL, "127.0.0.1")
            .build();
        ListenerPorts ports = ListenerPorts.allocate(topology);
        ports.advertise(1, "CLIENT", 1234);
        Map<String, String> combined = KRaftConfigs.serverProperties(topology, topology.node(1), ports);

        assertEquals("localhost:" + ports.port(1, "CONTROLLER"), combined.get("controller.quorum.bootstrap.servers"));
        assertEquals("INTERNAL://localhost:" + ports.port(1, "INTERNAL") + ",CLIENT://127.0.0.1:" + ports.port(1, "CLIENT")
            + ",CONTROLLER://localhost:" + ports.port(1, "CONTROLLER"), combined.get("listeners"));
        assertEquals("INTERNAL://localhost:" + ports.port(1, "INTERNAL") + ",CLIENT://127.0.0.1:1234"
            + ",CONTROLLER://localhost:" + ports.port(1, "CONTROLLER"), combined.get("advertised.listeners"));
        assertEquals("INTERNAL:PLAINTEXT,CLIENT:SSL,CONTROLLER:PLAINTEXT", combined.get("listener.security.protocol.map"));
        assertEquals("INTERNAL", combined.get("inter.broker.listener.name"));
    }

    @Test
    void aTopologyTheQuorumCannotHaveIsRefused() {
        assertThrows(IllegalStateException.class, () -> ClusterTopology.builder("no-controller").node(1, NodeRole.BROKER).build());
        assertThrows(IllegalStateException.class, () -> ClusterTopology.builder("zookeeper-with-controller").combined(1)
            .quorum(ClusterTopology.Quorum.ZOOKEEPER).build());
        assertThrows(IllegalStateException.class, () -> ClusterTopology.builder("unknown-client-listener").combined(1)
            .clientListener("CLIENT").build());
        assertThrows(IllegalArgumentException.class, () -> ClusterTopology.builder("controller-listener").combined(1)
            .listener("controller", SecurityProtocol.PLAINTEXT));
    }
}
