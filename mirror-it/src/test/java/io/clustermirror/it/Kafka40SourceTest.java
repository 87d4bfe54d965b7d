package io.clustermirror.it;

import java.util.Map;

/** Mirroring from a Kafka 4.0 cluster, the first line without ZooKeeper. */
class Kafka40SourceTest extends SourceReleaseContract {
    @Override
    ReleaseSource startSource() throws Exception {
        return ReleaseSource.start("4.0.2", ReleaseSource.Mode.KRAFT, Map.of());
    }
}
