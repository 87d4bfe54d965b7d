package io.clustermirror.broker.controller;

import io.clustermirror.broker.node.LocalClients;
import io.clustermirror.broker.auth.InternalOperations;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.ControllerProblem;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.common.secrets.BrokerClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What the {@link MirrorController} takes from its broker: its clients and the seams of its decisions. A seam so that the
 * controller can be tested with Kafka's client test doubles and no cluster.
 */
interface ControllerSeams {
    /** A read_committed consumer that assigns partitions itself; the caller closes it. */
    Consumer<byte[], byte[]> consumer(String clientSuffix);

    /**
     * Writes a {@link ControllerProblem} to {@code __mirror_commands}, where clients wait for their results. Best effort:
     * never throws, and blocks for a few seconds at most (the controller is failing anyway).
     */
    void reportProblem(ControllerProblem problem);

    /**
     * Starts one activation: ensures {@code __mirror_metadata} and {@code __mirror_state} exist with safe configs and opens
     * the controller's transactional producer (not initialized yet).
     */
    Activation activate() throws Exception;

    /** What one activation of the controller uses; closing it releases its clients. */
    interface Activation extends AutoCloseable {
        /** The producer of {@link InternalTopics#CONTROLLER_TRANSACTIONAL_ID}. */
        Producer<byte[], byte[]> producer();

        /** Publishes the sealing key ({@link SealingKeyPublication}); returns the desired state with re-sealed mirrors. */
        MirrorImage publishSealingKey(MirrorImage desired);

        /**
         * The topic id of {@code __mirror_commands} now.
         *
         * @throws org.apache.kafka.common.errors.UnknownTopicOrPartitionException if it does not exist
         */
        String commandsTopicId() throws Exception;

        /** The decisions for this activation's commands. */
        CommandProcessor processor() throws Exception;

        @Override
        void close();
    }

    /** The broker's clients, with its rules for source clients. */
    static ControllerSeams of(LocalClients clients, int nodeId, BrokerClientConfigs clientConfigs) {
        return new ControllerSeams() {
            @Override
            public Consumer<byte[], byte[]> consumer(String clientSuffix) {
                return clients.consumer(clientSuffix, true);
            }

            @Override
            public void reportProblem(ControllerProblem problem) {
                try (KafkaProducer<byte[], byte[]> producer = clients.producer("controller-problem", null,
                        Map.of(ProducerConfig.MAX_BLOCK_MS_CONFIG, REPORT_TIMEOUT_MS, ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG,
                            REPORT_TIMEOUT_MS, ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, REPORT_TIMEOUT_MS))) {
                    producer.send(new ProducerRecord<>(InternalTopics.COMMANDS, 0, RecordCodec.encodeKey(RecordCodec.CONTROLLER_PROBLEM_KEY),
                        RecordCodec.encodeCommand(problem))).get(REPORT_TIMEOUT_MS, TimeUnit.MILLISECONDS);
                } catch (Exception e) {
                    LoggerFactory.getLogger(MirrorController.class).debug("Could not report the mirror controller's problem in {}: {}",
                        InternalTopics.COMMANDS, e.toString());
                }
            }

            @Override
            public Activation activate() throws Exception {
                String adminClientId = InternalOperations.newClientId("cluster-mirror-" + nodeId + "-controller");
                Admin admin = clients.admin(adminClientId);
                KafkaProducer<byte[], byte[]> producer = null;
                try {
                    Optional<String> noTransactions = transactionLogProblem(admin, nodeId);
                    if (noTransactions.isPresent()) {
                        throw new IllegalStateException(noTransactions.get());
                    }
                    producer = clients.producer("controller", InternalTopics.CONTROLLER_TRANSACTIONAL_ID);
                    InternalTopicsInitializer.ensureExistWithSafeConfigs(admin, List.of(InternalTopics.METADATA, InternalTopics.STATE,
                        InternalTopics.TRANSACTIONS));
                } catch (Exception | Error e) {
                    if (producer != null) {
                        producer.close();
                    }
                    admin.close();
                    throw e;
                }
                KafkaProducer<byte[], byte[]> transactional = producer;
                return new Activation() {
                    @Override
                    public Producer<byte[], byte[]> producer() {
                        return transactional;
                    }

                    @Override
                    public MirrorImage publishSealingKey(MirrorImage desired) {
                        return SealingKeyPublication.publish(transactional, clientConfigs, desired);
                    }

                    @Override
                    public String commandsTopicId() throws Exception {
                        try {
                            return admin.describeTopics(List.of(InternalTopics.COMMANDS)).allTopicNames().get(30, TimeUnit.SECONDS)
                                .get(InternalTopics.COMMANDS).topicId().toString();
                        } catch (ExecutionException e) {
                            throw e.getCause() instanceof Exception cause ? cause : e;
                        }
                    }

                    @Override
                    public CommandProcessor processor() throws Exception {
                        String clusterId = admin.describeCluster().clusterId().get(30, TimeUnit.SECONDS);
                        return new CommandProcessor(new KafkaSourceCluster(clientConfigs),
                            new KafkaDestinationCluster(admin, adminClientId), clusterId);
                    }

                    @Override
                    public void close() {
                        transactional.close();
                        admin.close();
                    }
                };
            }
        };
    }

    /** How long a problem report may block the failing controller. */
    int REPORT_TIMEOUT_MS = 3_000;

    /** Why Kafka's transaction log cannot be created here ({@link TransactionLogCheck}); empty if it can, or if unknown. */
    private static Optional<String> transactionLogProblem(Admin admin, int nodeId) {
        try {
            boolean exists = admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get(30, TimeUnit.SECONDS)
                .contains(TransactionLogCheck.TOPIC);
            if (exists) {
                return Optional.empty();
            }
            int brokers = admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).size();
            ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(nodeId));
            ConfigEntry rf = admin.describeConfigs(List.of(broker)).all().get(30, TimeUnit.SECONDS).get(broker)
                .get(TransactionLogCheck.REPLICATION_FACTOR_CONFIG);
            return rf == null || rf.value() == null ? Optional.empty()
                : TransactionLogCheck.problem(false, brokers, Integer.parseInt(rf.value().trim()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            // Cannot tell: the activation goes on, and initTransactions() says what it finds.
            return Optional.empty();
        }
    }
}
