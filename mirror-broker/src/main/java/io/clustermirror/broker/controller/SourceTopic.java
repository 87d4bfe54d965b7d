package io.clustermirror.broker.controller;

import java.util.Map;

/**
 * What the controller learns about a source topic when mirroring starts.
 *
 * @param name       topic name
 * @param topicId    source topic id
 * @param partitions partition count
 * @param configs    topic configs set explicitly on the source (not broker defaults)
 */
record SourceTopic(String name, String topicId, int partitions, Map<String, String> configs) {
}
