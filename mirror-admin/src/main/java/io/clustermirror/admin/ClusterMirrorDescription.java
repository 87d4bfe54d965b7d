package io.clustermirror.admin;

import io.clustermirror.common.MirrorConfig;

import java.util.List;
import java.util.Map;

/**
 * A mirror as returned by {@link ClusterMirrorAdmin#describeClusterMirrors(java.util.Collection)}.
 *
 * @param name            the mirror's name
 * @param configs         the mirror's configs with sensitive values replaced by {@code [hidden]}
 * @param sourceClusterId the source cluster's id, read from the source when the mirror was created
 * @param topics          the mirror's topics, sorted by name
 */
public record ClusterMirrorDescription(String name, Map<String, String> configs, String sourceClusterId,
                                       List<MirrorTopicDescription> topics) {
    public ClusterMirrorDescription {
        configs = Map.copyOf(configs);
        topics = List.copyOf(topics);
    }

    /** The source cluster's {@code bootstrap.servers}. */
    public String sourceBootstrapServers() {
        return configs.get(MirrorConfig.BOOTSTRAP_SERVERS);
    }
}
