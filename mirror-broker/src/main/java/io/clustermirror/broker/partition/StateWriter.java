package io.clustermirror.broker.partition;

import io.clustermirror.broker.LocalClients;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.RecordCodec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;

/**
 * Writes partition states to {@code __mirror_state} with an idempotent producer. Records carry the writer's
 * destination leader epoch, so readers ignore a stale leader's late writes.
 */
final class StateWriter implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StateWriter.class);
    private final KafkaProducer<byte[], byte[]> producer;

    StateWriter(LocalClients clients) {
        this.producer = clients.producer("state-writer", null);
    }

    void write(PartitionStateRecord record) {
        producer.send(new ProducerRecord<>(InternalTopics.STATE, RecordCodec.encodeKey(record.key()), RecordCodec.encodeState(record)),
            (metadata, error) -> {
                if (error != null) {
                    log.warn("Could not record state {} of mirror partition {}: {}", record.state(), record.key(), error.toString());
                }
            });
    }

    @Override
    public void close() {
        producer.close(Duration.ofSeconds(5));
    }
}
