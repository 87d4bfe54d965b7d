package io.clustermirror.bench;

import io.clustermirror.testkit.FreePorts;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/** A KRaft cluster of separate JVMs: node 1 is combined (controller + broker), further nodes are brokers. */
final class BenchCluster implements AutoCloseable {
    final String name;
    final List<KafkaNode> nodes = new ArrayList<>();
    private final Path home;
    private final Path dir;
    private final Map<String, String> extra;
    private final String clusterId = Uuid.randomUuid().toString();
    private Admin admin;

    private BenchCluster(Path home, Path dir, String name, Map<String, String> extra) {
        this.home = home;
        this.dir = dir;
        this.name = name;
        this.extra = extra;
    }

    static BenchCluster start(Path home, Path workDir, String name, int brokers, Map<String, String> extra) {
        BenchCluster c = new BenchCluster(home, workDir.resolve(name), name, extra);
        try {
            c.nodes.add(new KafkaNode(home, name, c.clusterId, c.dir.resolve("node1"), 1, FreePorts.next(), FreePorts.next()));
            c.nodes.get(0).start(c.nodes.get(0).controllerPort, extra);
            for (int i = 2; i <= brokers; i++) {
                c.addBroker();
            }
            c.awaitReady();
            return c;
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
    }

    /** Starts one more broker-only node and returns it (without waiting for it). */
    KafkaNode addBroker() {
        int id = nodes.size() + 1;
        KafkaNode n = new KafkaNode(home, name, clusterId, dir.resolve("node" + id), id, FreePorts.next(), -1);
        nodes.add(n);
        n.start(nodes.get(0).controllerPort, extra);
        return n;
    }

    String bootstrap() {
        return nodes.get(0).bootstrap();
    }

    KafkaNode node(int id) {
        return nodes.get(id - 1);
    }

    Properties clientProps() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        return p;
    }

    synchronized Admin admin() {
        if (admin == null) {
            admin = Admin.create(clientProps());
        }
        return admin;
    }

    /** Waits until every node is ready; fails early if one exits. */
    void awaitReady() {
        for (KafkaNode node : nodes) {
            node.awaitReady(admin());
        }
    }

    /** CPU seconds of the given nodes (all if none given). */
    double cpuSeconds(int... nodeIds) {
        double sum = 0;
        if (nodeIds.length == 0) {
            for (KafkaNode n : nodes) {
                sum += n.cpuSeconds();
            }
        } else {
            for (int id : nodeIds) {
                sum += node(id).cpuSeconds();
            }
        }
        return sum;
    }

    @Override
    public void close() {
        if (admin != null) {
            admin.close(java.time.Duration.ofSeconds(5));
            admin = null;
        }
        // Brokers first, the controller last (a broker without its controller waits for it on shutdown).
        for (int i = nodes.size() - 1; i >= 0; i--) {
            nodes.get(i).close();
        }
    }
}
