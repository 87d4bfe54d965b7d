package io.clustermirror.admin;

/**
 * One mirror as returned by {@link ClusterMirrorAdmin#listClusterMirrors()}.
 *
 * @param name                   the mirror's name
 * @param sourceBootstrapServers the source cluster's {@code bootstrap.servers}
 * @param sourceClusterId        the source cluster's id, read from the source when the mirror was created
 * @param topicCount             how many destination topics belong to the mirror, in any desired state
 */
public record ClusterMirrorListing(String name, String sourceBootstrapServers, String sourceClusterId,
                                   int topicCount) {
}
