package io.clustermirror.admin;

import org.apache.kafka.clients.admin.AbstractOptions;

/**
 * Options for {@link ClusterMirrorAdmin#alterClusterMirrorConfigs(String, java.util.Collection, AlterClusterMirrorConfigsOptions)}.
 * {@link #timeoutMs(Integer)} bounds the whole operation, counted from the call; null uses the client's {@code default.api.timeout.ms} (60 seconds by default).
 */
public class AlterClusterMirrorConfigsOptions extends AbstractOptions<AlterClusterMirrorConfigsOptions> {
}
