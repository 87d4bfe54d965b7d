package io.clustermirror.it;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A destination whose mirror controller cannot work says why to the operator's command within seconds, on a launched
 * node: a one-broker cluster with Kafka's default {@code transaction.state.log.replication.factor=3} never creates its
 * transaction log, which the controller writes through. The tool used to wait its whole timeout (60 s) and then name no
 * cause ("check that the destination brokers run the Cluster Mirror extension", which they do).
 */
@Tag(ProcessCluster.TAG)
class ControllerProblemTest {
    @Test
    void aControllerWithoutATransactionLogNamesTheCauseAndTheFixToTheCommand() throws Exception {
        try (ProcessCluster destination = ProcessCluster.start(ProcessCluster.topology("no-transaction-log").combined(1)
                .serverProperties(Map.of("transaction.state.log.replication.factor", "3", "transaction.state.log.min.isr", "2")).build())) {
            long start = System.nanoTime();
            CliRun deleted = CliRun.run(destination.bootstrapServers(), "--delete", "--mirror", "dr", "--timeout-ms", "60000");
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            LoggerFactory.getLogger(ControllerProblemTest.class).info("The command ended after {} ms: {}", tookMs, deleted.err().trim());
            assertEquals(1, deleted.exit(), deleted.toString());
            assertTrue(deleted.err().contains("MIRROR_CONTROLLER_UNAVAILABLE") && deleted.err().contains("the mirror controller on "
                + "broker 1 cannot work") && deleted.err().contains("transaction.state.log.replication.factor=3 but the cluster has 1 "
                + "broker(s)") && deleted.err().contains("Set transaction.state.log.replication.factor (and "
                + "transaction.state.log.min.isr) to at most 1 on every broker"), deleted.err());
            // Not a timing benchmark: the bound only tells the answer from the 60 s timeout it replaces.
            assertTrue(tookMs < 30_000, "answered after " + tookMs + " ms");
        }
    }
}
