package io.clustermirror.common.records;

import java.util.Map;

/**
 * A mirror's definition in {@code __mirror_metadata} (key {@code mirror:<name>}).
 *
 * @param name            the mirror's name
 * @param configs         the mirror configs as given at create (secrets may be ConfigProvider references)
 * @param sourceClusterId the source cluster's id, read from the source at create
 * @param createdMs       creation time
 */
public record MirrorRecord(String name, Map<String, String> configs, String sourceClusterId, long createdMs) {
    public MirrorRecord {
        configs = configs == null ? Map.of() : Map.copyOf(configs);
    }
}
