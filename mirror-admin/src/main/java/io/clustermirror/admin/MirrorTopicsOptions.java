package io.clustermirror.admin;

import org.apache.kafka.clients.admin.AbstractOptions;

/**
 * Options for the operations on a mirror's topics: {@link ClusterMirrorAdmin#startMirrorTopics},
 * {@link ClusterMirrorAdmin#stopMirrorTopics}, {@link ClusterMirrorAdmin#pauseMirrorTopics} and
 * {@link ClusterMirrorAdmin#resumeMirrorTopics}. {@link #timeoutMs(Integer)} bounds the whole operation,
 * counted from the call; null uses the client's {@code default.api.timeout.ms} (60 seconds by default).
 */
public class MirrorTopicsOptions extends AbstractOptions<MirrorTopicsOptions> {
}
