package io.clustermirror.it;

import io.clustermirror.testsupport.ClusterTopology;
import java.util.Map;

/** Mirroring from a Kafka 4.4 cluster, the newest line, to a destination on the build's Kafka. */
class Kafka44SourceTest extends SourceReleaseContract {
    static ClusterPair.Topologies topologies() {
        return withDestination(ReleaseSource.topology("4.4.0", ClusterTopology.Quorum.STATIC, Map.of()));
    }
}
