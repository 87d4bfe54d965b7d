package io.clustermirror.common.compat;

import org.apache.kafka.common.Uuid;

import java.util.Optional;

/**
 * Where one partition is fetched from in a consumer Fetch.
 *
 * @param topicId          the source topic's id (a topic recreated under the same name is another topic)
 * @param fetchOffset      the first offset wanted
 * @param maxBytes         at most about this many bytes of the partition (the first batch comes whole whatever the limit)
 * @param lastFetchedEpoch the leader epoch of the last batch fetched before {@code fetchOffset}, so that the source
 *                         answers a diverging epoch when its log no longer matches; empty at the start of a log
 */
public record FetchPosition(Uuid topicId, long fetchOffset, int maxBytes, Optional<Integer> lastFetchedEpoch) {
}
