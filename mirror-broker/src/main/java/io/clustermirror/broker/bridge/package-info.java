/**
 * The broker's half of the compatibility layer: the only code that touches Kafka's Scala broker classes and its
 * server and storage internals ({@link io.clustermirror.broker.bridge.BrokerHandle}); the clients' half is
 * {@code io.clustermirror.common.compat}. {@link io.clustermirror.broker.bridge.KafkaSupport} checks at start that
 * the running Kafka has every internal both use.
 *
 * <p>Verified on Kafka 4.3.1 (see the tests): RAFT_LEADER appends keep offsets, gaps, bytes and CRCs but
 * require the batch epoch to equal the leader's current epoch (a stale leader is fenced); transactional
 * batches need an explicit transaction version (1 accepts both TV1 and TV2 markers, 2 would reject TV1
 * ones); a direct {@code Partition} append does not wake followers in their long poll, so the bridge
 * completes the delayed fetch/produce/delete-records operations like {@code ReplicaManager} does after a
 * produce; metadata publishers run on the single loader thread and are lost when the broker restarts.
 */
package io.clustermirror.broker.bridge;
