package io.clustermirror.it;

import java.util.Map;

/** Mirroring from a Kafka 4.4 cluster, the newest line, to a destination on the build's Kafka. */
class Kafka44SourceTest extends SourceReleaseContract {
    @Override
    ReleaseSource startSource() throws Exception {
        return ReleaseSource.start("4.4.0", ReleaseSource.Mode.KRAFT, Map.of());
    }
}
