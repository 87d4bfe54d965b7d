package io.clustermirror.broker.controller;

import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

class TransactionLogCheckTest {
    @Test
    void aMissingLogThatNeedsMoreBrokersThanTheClusterHasNamesTheFix() {
        assertEquals(Optional.of("Kafka's transaction log __transaction_state cannot be created: "
            + "transaction.state.log.replication.factor=3 but the cluster has 1 broker(s), and the mirror controller writes in "
            + "transactions. Set transaction.state.log.replication.factor (and transaction.state.log.min.isr) to at most 1 on "
            + "every broker and restart them, or add brokers"), TransactionLogCheck.problem(false, 1, 3));
    }

    @Test
    void anExistingLogOrEnoughBrokersIsNoProblem() {
        assertEquals(Optional.empty(), TransactionLogCheck.problem(true, 1, 3), "it exists: it was created when it could be");
        assertEquals(Optional.empty(), TransactionLogCheck.problem(false, 3, 3));
        assertEquals(Optional.empty(), TransactionLogCheck.problem(false, 1, 1));
    }
}
