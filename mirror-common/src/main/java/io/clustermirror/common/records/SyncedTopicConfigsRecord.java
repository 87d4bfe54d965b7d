package io.clustermirror.common.records;

import java.util.Map;

/**
 * The topic configs a mirror's metadata sync sets on one destination topic, in {@code __mirror_metadata} (key
 * {@link #key}: {@code synced-configs:<topic>}): the source topic's configs that the mirror copies (set on the source
 * topic itself, not excluded), by name. The sync writes it before each change of the topic's configs, and whenever it
 * differs from what the source says, so that a node which authorizes config changes can tell the sync's values from
 * anyone else's: on a mirror topic that is not STOPPED, only these values may be set, and only names the mirror copies
 * but the source does not set may be removed.
 *
 * <p>Older readers ignore the key (they skip unknown {@code __mirror_metadata} keys).
 *
 * @param mirror    the mirror whose sync wrote it
 * @param topic     the destination topic (same name as the source topic)
 * @param configs   the source's values the sync sets, by config name
 * @param updatedMs when the sync wrote it
 */
public record SyncedTopicConfigsRecord(String mirror, String topic, Map<String, String> configs, long updatedMs) {
    public static final String KEY_PREFIX = "synced-configs:";

    public SyncedTopicConfigsRecord {
        configs = configs == null ? Map.of() : Map.copyOf(configs);
    }

    public static String key(String topic) {
        return KEY_PREFIX + topic;
    }
}
