/**
 * The data plane: {@link io.clustermirror.broker.fetch.MirrorFetcherManager} fetches raw batches from
 * the source with consumer Fetch requests and appends them as-is through a
 * {@link io.clustermirror.broker.fetch.PartitionAppender}.
 *
 * <p>Rules the code relies on (see the tests for proof):
 * <ul>
 *   <li>Only whole, CRC-valid, magic-v2 batches are appended: the RAFT_LEADER origin used by the bridge
 *       skips Kafka's own validation. A bad batch fails its partition only.</li>
 *   <li>The source partitionLeaderEpoch of each batch is read before the append (the bridge overwrites
 *       it with the destination epoch) and reported through {@link io.clustermirror.broker.fetch.FetchListener}.</li>
 *   <li>{@code removePartition} and {@code close} return only when no append is in flight or can start,
 *       so the caller may truncate or stop the partition right after.</li>
 *   <li>Fetcher threads are never interrupted (an interrupt inside log I/O closes the log's FileChannel).</li>
 *   <li>Source topic identity is checked by id: a deleted or recreated source topic stops its partitions
 *       with SOURCE_TOPIC_DELETED or SOURCE_TOPIC_ID_CHANGED and never mixes data.</li>
 *   <li>Nothing the source lost is skipped in silence: records it deleted before they were mirrored are reported
 *       with their range ({@link io.clustermirror.broker.fetch.FetchListener#onSourceRecordsLost}), and the partition
 *       goes on past them only when the partition manager hands it back so.</li>
 * </ul>
 */
package io.clustermirror.broker.fetch;
