package io.clustermirror.admin;

import org.apache.kafka.clients.admin.AbstractOptions;

/**
 * Options for {@link ClusterMirrorAdmin#createClusterMirror(String, java.util.Map, CreateClusterMirrorOptions)}.
 * {@link #timeoutMs(Integer)} bounds the whole operation, counted from the call; null uses the client's {@code default.api.timeout.ms} (60 seconds by default).
 */
public class CreateClusterMirrorOptions extends AbstractOptions<CreateClusterMirrorOptions> {
}
