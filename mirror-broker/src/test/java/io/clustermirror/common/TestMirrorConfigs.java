package io.clustermirror.common;

import java.util.Map;

/** Builds MirrorConfig instances for tests without MirrorConfig.validate (implemented elsewhere). */
public final class TestMirrorConfigs {
    private TestMirrorConfigs() {
    }

    public static MirrorConfig of(String name, Map<String, String> configs) {
        return MirrorConfig.trusted(name, configs);
    }
}
