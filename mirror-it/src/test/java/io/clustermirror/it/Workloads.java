package io.clustermirror.it;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

/** Writes the mix of batches the identity tests need: every producer kind and codec, headers, nulls. */
final class Workloads {
    static final String[] CODECS = {"none", "gzip", "snappy", "lz4", "zstd"};

    private Workloads() {
    }

    static KafkaProducer<byte[], byte[]> producer(String bootstrap, Map<String, Object> overrides) {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60_000);
        props.putAll(overrides);
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    }

    static byte[] bytes(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    /** A record with a header; every seventh has a null key and every eleventh a null value. */
    static ProducerRecord<byte[], byte[]> record(String topic, int partition, String tag, int i) {
        RecordHeaders headers = new RecordHeaders();
        headers.add("h-" + tag, bytes("v" + i));
        String key = i % 7 == 0 ? null : "k-" + tag + "-" + i;
        String value = i % 11 == 0 ? null : "value-" + tag + "-" + i;
        return new ProducerRecord<>(topic, partition, null, bytes(key), bytes(value), headers);
    }

    /**
     * For each codec: plain (non-idempotent) batches, idempotent batches, and transactions that commit and
     * abort interleaved, across every partition of the topic.
     */
    static void writeAllKinds(String bootstrap, String topic, int partitions, int perBatch) throws ExecutionException, InterruptedException {
        for (String codec : CODECS) {
            try (KafkaProducer<byte[], byte[]> plain = producer(bootstrap, Map.of(
                    ProducerConfig.COMPRESSION_TYPE_CONFIG, codec, ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false, ProducerConfig.ACKS_CONFIG, "1"));
                 KafkaProducer<byte[], byte[]> idempotent = producer(bootstrap, Map.of(
                    ProducerConfig.COMPRESSION_TYPE_CONFIG, codec, ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true));
                 KafkaProducer<byte[], byte[]> transactional = producer(bootstrap, Map.of(
                    ProducerConfig.COMPRESSION_TYPE_CONFIG, codec, ProducerConfig.TRANSACTIONAL_ID_CONFIG, "tx-" + topic + "-" + codec))) {
                transactional.initTransactions();
                for (int p = 0; p < partitions; p++) {
                    sendBatch(plain, topic, p, "plain-" + codec, perBatch);
                    sendBatch(idempotent, topic, p, "idem-" + codec, perBatch);
                    transactional.beginTransaction();
                    sendBatch(transactional, topic, p, "committed-" + codec, perBatch);
                    transactional.commitTransaction();
                    transactional.beginTransaction();
                    sendBatch(transactional, topic, p, "aborted-" + codec, perBatch);
                    transactional.abortTransaction();
                    sendBatch(idempotent, topic, p, "idem2-" + codec, perBatch);
                }
            }
        }
    }

    static void sendBatch(KafkaProducer<byte[], byte[]> producer, String topic, int partition, String tag, int count)
            throws ExecutionException, InterruptedException {
        Future<?> last = null;
        for (int i = 0; i < count; i++) {
            last = producer.send(record(topic, partition, tag, i));
        }
        producer.flush();
        if (last != null) {
            last.get();
        }
    }
}
