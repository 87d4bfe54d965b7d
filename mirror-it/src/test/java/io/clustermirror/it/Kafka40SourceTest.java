package io.clustermirror.it;

import io.clustermirror.testsupport.ClusterTopology;
import java.util.Map;

/** Mirroring from a Kafka 4.0 cluster, the first line without ZooKeeper. */
class Kafka40SourceTest extends SourceReleaseContract {
    static ClusterPair.Topologies topologies() {
        return withDestination(ReleaseSource.topology("4.0.2", ClusterTopology.Quorum.STATIC, Map.of()));
    }
}
