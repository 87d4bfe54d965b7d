package io.clustermirror.broker.controller;

import java.util.Optional;

/**
 * Whether Kafka's transaction log can exist in this cluster. The mirror controller writes every outcome in a transaction,
 * and a cluster with fewer brokers than {@code transaction.state.log.replication.factor} never creates
 * {@code __transaction_state}: the controller's {@code initTransactions()} then waits for a coordinator that never comes,
 * and every mirror command with it. Told before the wait, the controller reports the cause and the fix at once.
 */
final class TransactionLogCheck {
    static final String TOPIC = "__transaction_state";
    static final String REPLICATION_FACTOR_CONFIG = "transaction.state.log.replication.factor";

    private TransactionLogCheck() {
    }

    /**
     * @param logExists         whether {@code __transaction_state} exists (then it works, whatever the config says now)
     * @param brokers           the brokers the cluster has now
     * @param replicationFactor the broker's {@code transaction.state.log.replication.factor}
     * @return why the transaction log cannot be created, with the fix; empty if it exists or can be
     */
    static Optional<String> problem(boolean logExists, int brokers, int replicationFactor) {
        if (logExists || replicationFactor <= brokers) {
            return Optional.empty();
        }
        return Optional.of("Kafka's transaction log " + TOPIC + " cannot be created: " + REPLICATION_FACTOR_CONFIG + "="
            + replicationFactor + " but the cluster has " + brokers + " broker(s), and the mirror controller writes in transactions. "
            + "Set " + REPLICATION_FACTOR_CONFIG + " (and transaction.state.log.min.isr) to at most " + brokers
            + " on every broker and restart them, or add brokers");
    }
}
