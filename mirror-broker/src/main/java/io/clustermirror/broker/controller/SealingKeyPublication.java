package io.clustermirror.broker.controller;

import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.image.MirrorDelta;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.common.records.SealingKeyRecord;
import io.clustermirror.common.secrets.BrokerClientConfigs;
import io.clustermirror.common.secrets.SealingKey;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What a mirror controller writes to {@code __mirror_metadata} when it becomes active, before any command, in one
 * transaction: the key clients seal inline secrets with ({@link SealingKeyRecord}), or {@link SealingKeyRecord#NONE}
 * when this broker has no password-encoder secret (clients then refuse inline secrets instead of sending what no
 * controller can open); and, after a key rotation, the mirror records whose secrets were sealed for the old key,
 * sealed again for the current one, so that the old secret can be removed.
 */
final class SealingKeyPublication {
    private static final Logger log = LoggerFactory.getLogger(SealingKeyPublication.class);

    private SealingKeyPublication() {
    }

    /** @return the controller's desired state with the re-sealed mirror records */
    static MirrorImage publish(Producer<byte[], byte[]> producer, BrokerClientConfigs clientConfigs, MirrorImage desired) {
        Optional<SealingKey> key = clientConfigs.sealingKey();
        List<MirrorRecord> resealed = new ArrayList<>();
        for (MirrorRecord mirror : desired.mirrors().values()) {
            try {
                Map<String, String> configs = clientConfigs.resealed(mirror.name(), mirror.configs());
                if (configs != mirror.configs()) {
                    resealed.add(new MirrorRecord(mirror.name(), configs, mirror.sourceClusterId(), mirror.createdMs()));
                }
            } catch (ClusterMirrorException e) {
                log.warn("Mirror '{}' keeps secrets this broker cannot decrypt: {}", mirror.name(), e.getMessage());
            }
        }
        MirrorDelta delta = new MirrorDelta(desired);
        producer.beginTransaction();
        try {
            byte[] sealingKey = RecordCodec.encodeKey(RecordCodec.SEALING_KEY);
            SealingKeyRecord published = key.map(k -> new SealingKeyRecord(k.id(), k.encoded())).orElse(SealingKeyRecord.NONE);
            producer.send(new ProducerRecord<>(InternalTopics.METADATA, 0, sealingKey, RecordCodec.encodeSealingKey(published)));
            for (MirrorRecord mirror : resealed) {
                byte[] mirrorKey = RecordCodec.encodeKey(RecordCodec.mirrorKey(mirror.name()));
                byte[] value = RecordCodec.encodeMirror(mirror);
                producer.send(new ProducerRecord<>(InternalTopics.METADATA, 0, mirrorKey, value));
                delta.replayMetadata(mirrorKey, value);
            }
            producer.commitTransaction();
        } catch (ProducerFencedException e) {
            throw e;
        } catch (KafkaException e) {
            producer.abortTransaction();
            throw e;
        }
        log.info("Mirror controller publishes sealing key {}{}", key.map(SealingKey::id).orElse("none (inline secrets refused)"),
            resealed.isEmpty() ? "" : "; re-encrypted the secrets of mirror(s) " + resealed.stream().map(MirrorRecord::name).toList()
                + " with it");
        return delta.apply();
    }
}
