package io.clustermirror.it;

import java.util.Map;

/** Mirroring from a Kafka 3.9 cluster in KRaft mode, the last release line before 4.0. */
class Kafka39SourceTest extends SourceReleaseContract {
    @Override
    ReleaseSource startSource() throws Exception {
        return ReleaseSource.start("3.9.1", ReleaseSource.Mode.KRAFT, Map.of());
    }
}
