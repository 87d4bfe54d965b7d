package io.clustermirror.broker.controller;

import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.common.records.SealingKeyRecord;
import io.clustermirror.common.secrets.BrokerClientConfigs;
import io.clustermirror.common.secrets.PasswordEncoderKeys;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SealingKeyPublicationTest {
    private static final String PASSWORD = "canary-51c0";
    private static final String SECRET_1 = "first-encoder-secret-7Kq2xVw9LpZ4mR8t";
    private static final String SECRET_2 = "second-encoder-secret-3Hn6yBf1QjT5cW0s";

    private static MockProducer<byte[], byte[]> producer() {
        MockProducer<byte[], byte[]> producer = new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
        producer.initTransactions();
        return producer;
    }

    private static BrokerClientConfigs broker(String... keyValues) {
        Map<String, String> configs = new HashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            configs.put(keyValues[i], keyValues[i + 1]);
        }
        return BrokerClientConfigs.fromBrokerConfigs(configs);
    }

    private static MirrorImage imageWith(MirrorRecord mirror) {
        return new MirrorImage(Map.of(mirror.name(), mirror), Map.of(), Map.of());
    }

    private static List<ProducerRecord<byte[], byte[]>> committed(MockProducer<byte[], byte[]> producer) {
        assertTrue(producer.transactionCommitted(), "one committed transaction");
        return producer.history();
    }

    @Test
    void publishesTheKeyOrThatThereIsNone() {
        try (BrokerClientConfigs with = broker(PasswordEncoderKeys.SECRET_CONFIG, SECRET_1); BrokerClientConfigs without = broker()) {
            MockProducer<byte[], byte[]> producer = producer();
            SealingKeyPublication.publish(producer, with, MirrorImage.EMPTY);
            ProducerRecord<byte[], byte[]> published = committed(producer).get(0);
            assertEquals(InternalTopics.METADATA, published.topic());
            assertEquals(RecordCodec.SEALING_KEY, RecordCodec.decodeKey(published.key()));
            assertEquals(with.sealingKey().orElseThrow().encoded(), RecordCodec.decodeSealingKey(published.value()).publicKey());

            MockProducer<byte[], byte[]> none = producer();
            SealingKeyPublication.publish(none, without, MirrorImage.EMPTY);
            assertEquals(SealingKeyRecord.NONE, RecordCodec.decodeSealingKey(committed(none).get(0).value()));
        }
    }

    /** Rotation: the controller with the new and the old secret writes the mirror again, sealed for the new key only. */
    @Test
    void resealsTheSecretsOfAnOldKeyInTheSameTransaction() {
        try (BrokerClientConfigs before = broker(PasswordEncoderKeys.SECRET_CONFIG, SECRET_1);
             BrokerClientConfigs rotating = broker(PasswordEncoderKeys.SECRET_CONFIG, SECRET_2, PasswordEncoderKeys.OLD_SECRET_CONFIG, SECRET_1);
             BrokerClientConfigs after = broker(PasswordEncoderKeys.SECRET_CONFIG, SECRET_2)) {
            Map<String, String> configs = before.sealingKey().orElseThrow().sealInlineSecrets("dr",
                Map.of(MirrorConfig.BOOTSTRAP_SERVERS, "source:9092", "ssl.key.password", PASSWORD));
            MirrorRecord stored = new MirrorRecord("dr", configs, "source-id", 1L);

            MockProducer<byte[], byte[]> unchanged = producer();
            assertEquals(stored, SealingKeyPublication.publish(unchanged, before, imageWith(stored)).mirror("dr").orElseThrow());
            assertEquals(1, committed(unchanged).size(), "nothing to re-seal for the current key");

            MockProducer<byte[], byte[]> producer = producer();
            MirrorRecord resealed = SealingKeyPublication.publish(producer, rotating, imageWith(stored)).mirror("dr").orElseThrow();
            assertNotEquals(stored, resealed);
            assertEquals("source-id", resealed.sourceClusterId());
            List<ProducerRecord<byte[], byte[]>> written = committed(producer);
            assertEquals(2, written.size());
            assertEquals(resealed, RecordCodec.decodeMirror(written.get(1).value()));
            assertFalse(new String(written.get(1).value(), StandardCharsets.UTF_8).contains(PASSWORD));
            MirrorConfig config = MirrorConfig.validate("dr", resealed.configs());
            assertEquals(PASSWORD, after.clientProperties(config).getProperty("ssl.key.password"));
        }
    }
}
