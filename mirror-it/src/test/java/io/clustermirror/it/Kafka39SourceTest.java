package io.clustermirror.it;

import io.clustermirror.testsupport.ClusterTopology;
import java.util.Map;

/** Mirroring from a Kafka 3.9 cluster in KRaft mode, the last release line before 4.0. */
class Kafka39SourceTest extends SourceReleaseContract {
    static ClusterPair.Topologies topologies() {
        return withDestination(ReleaseSource.topology("3.9.1", ClusterTopology.Quorum.STATIC, Map.of()));
    }
}
