package io.clustermirror.broker.controller;

import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.image.MirrorImage;

import java.util.Collection;
import java.util.Map;
import java.util.Set;

/** The controller's questions to a mirror's source cluster. */
interface SourceCluster {
    /**
     * @throws io.clustermirror.common.ClusterMirrorException SOURCE_CLUSTER_UNREACHABLE if it cannot be reached
     */
    String clusterId(MirrorConfig config);

    /** Names of the source's non-internal topics. */
    Set<String> topicNames(MirrorConfig config);

    /** Partition counts, ids and explicitly set configs of the given source topics. */
    Map<String, SourceTopic> describe(MirrorConfig config, Collection<String> topics);

    /** The source's own mirror image (what it mirrors, and from where); empty if it runs no Cluster Mirror. */
    MirrorImage mirrorImage(MirrorConfig config);
}
