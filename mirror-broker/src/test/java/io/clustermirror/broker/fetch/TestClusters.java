package io.clustermirror.broker.fetch;

import io.clustermirror.broker.bridge.BrokerHandle;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.apache.kafka.metadata.bootstrap.BootstrapMetadata;
import org.apache.kafka.server.common.Feature;
import org.apache.kafka.server.common.MetadataVersion;

import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/** In-JVM KRaft clusters for the data-plane tests. */
public final class TestClusters {
    private TestClusters() {
    }

    /**
     * 1 controller + {@code brokers} brokers at the latest production metadata version, with the production features
     * at their defaults for it (transaction.version 2, ...), as a cluster formatted by kafka-storage.sh runs.
     * Not {@code setBootstrapMetadataVersion}: Kafka 4.3.1's {@code BootstrapMetadata.copyWithFeatureRecord} drops
     * every feature record after the one it replaces, so the cluster would run with transaction.version 0.
     */
    public static KafkaClusterTestKit start(String name, int brokers, Map<String, String> props) throws Exception {
        TestKitNodes nodes = new TestKitNodes.Builder()
            .setCombined(false)
            .setNumControllerNodes(1)
            .setNumBrokerNodes(brokers)
            .setBootstrapMetadata(BootstrapMetadata.fromVersions(MetadataVersion.latestProduction(),
                Feature.PRODUCTION_FEATURES.stream().collect(Collectors.toMap(Feature::featureName,
                    f -> f.defaultLevel(MetadataVersion.latestProduction()))), "test-clusters"))
            .setBaseDirectory(Files.createTempDirectory("cm-" + name))
            .build();
        KafkaClusterTestKit.Builder b = new KafkaClusterTestKit.Builder(nodes).setDeleteOnClose(true);
        b.setConfigProp("group.initial.rebalance.delay.ms", "0");
        if (brokers == 1) {
            b.setConfigProp("transaction.state.log.replication.factor", "1");
            b.setConfigProp("transaction.state.log.min.isr", "1");
            b.setConfigProp("offsets.topic.replication.factor", "1");
        }
        props.forEach(b::setConfigProp);
        KafkaClusterTestKit c = b.build();
        c.format();
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
