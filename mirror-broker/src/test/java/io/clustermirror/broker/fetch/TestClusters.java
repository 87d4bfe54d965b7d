package io.clustermirror.broker.fetch;

import io.clustermirror.broker.bridge.BrokerHandle;
import io.clustermirror.testsupport.InJvmClusters;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.test.KafkaClusterTestKit;

import java.nio.file.Files;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** In-JVM KRaft clusters of stock Kafka for the data-plane tests: the in-JVM back end of a test-cluster topology. */
public final class TestClusters {
    private TestClusters() {
    }

    /**
     * Starts 1 controller + {@code brokers} brokers ({@link InJvmClusters#topology}) at the latest production metadata
     * version, with the production features at their defaults for it (transaction.version 2, ...), as a cluster formatted
     * by kafka-storage.sh runs; {@code props} on every node. Returns once every broker is ready.
     */
    public static KafkaClusterTestKit start(String name, int brokers, Map<String, String> props) throws Exception {
        Map<String, String> defaults = new LinkedHashMap<>();
        defaults.put("group.initial.rebalance.delay.ms", "0");
        if (brokers == 1) {
            defaults.put("transaction.state.log.replication.factor", "1");
            defaults.put("transaction.state.log.min.isr", "1");
            defaults.put("offsets.topic.replication.factor", "1");
        }
        KafkaClusterTestKit c = InJvmClusters.build(InJvmClusters.topology(name, brokers).serverProperties(props).build(),
            Files.createTempDirectory("cm-" + name), defaults);
        c.startup();
        c.waitForReadyBrokers();
        return c;
    }

    public static List<BrokerHandle> handles(KafkaClusterTestKit c) {
        return c.brokers().values().stream().map(BrokerHandle::of).toList();
    }

    public static Optional<BrokerHandle> leader(List<BrokerHandle> handles, TopicPartition tp) {
        return handles.stream().filter(h -> !h.isShutdown() && h.leaderLogState(tp).isPresent()).findFirst();
    }
}
