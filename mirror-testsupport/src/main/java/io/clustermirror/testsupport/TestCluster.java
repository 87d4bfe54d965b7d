package io.clustermirror.testsupport;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartition;

import java.nio.file.Path;
import java.util.Properties;

/**
 * What tests need of a running cluster, whoever runs it: mirror-testkit's {@code MirrorTestCluster} (in this JVM) or a cluster
 * of separate broker processes ({@link LaunchedCluster}). Assertions written against this interface work on both.
 */
public interface TestCluster {
    String name();

    /** Every broker's address, stopped ones included. */
    String bootstrapServers();

    /** Client properties to connect to this cluster; add your own client configs to them. */
    default Properties clientProperties() {
        Properties props = new Properties();
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        return props;
    }

    /** A new Admin client for this cluster; the caller closes it. */
    default Admin admin() {
        return Admin.create(clientProperties());
    }

    /** The current leader of a partition on a running broker, waiting until there is one. */
    int leaderOf(TopicPartition partition) throws InterruptedException;

    /** The directory holding a broker's replica of a partition, waiting until it exists. */
    Path partitionDir(int brokerId, TopicPartition partition) throws InterruptedException;
}
