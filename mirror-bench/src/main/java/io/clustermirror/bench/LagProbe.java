package io.clustermirror.bench;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Steady-state lag: produces 1 KiB records at a fixed rate to the source and consumes them (read_committed)
 * on the destination; the lag of a record is (time it was consumed - its timestamp), the timestamp being the
 * producer's send time (CreateTime, kept as-is by all three copiers). Only records sent after the warm-up
 * count.
 */
final class LagProbe {
    private static final int MAX_MS = 120_000;

    private LagProbe() {
    }

    static Map<String, Object> run(String produceTo, String consumeFrom, String topic, int partitions, String codec,
                                   double rateMBps, int warmupSec, int measureSec) {
        long[] histogram = new long[MAX_MS + 1];
        AtomicLong produced = new AtomicLong();
        AtomicReference<Exception> sendError = new AtomicReference<>();
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, consumeFrom);
        cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        cp.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(cp, new ByteArrayDeserializer(),
            new ByteArrayDeserializer())) {
            List<TopicPartition> tps = awaitPartitions(consumer, topic, partitions);
            consumer.assign(tps);
            consumer.seekToEnd(tps);
            tps.forEach(consumer::position);

            long start = System.currentTimeMillis();
            long warmupEnd = start + warmupSec * 1000L;
            long measureEnd = warmupEnd + measureSec * 1000L;
            Thread producer = new Thread(() -> produce(produceTo, topic, codec, rateMBps, measureEnd, produced, sendError),
                "lag-producer");
            producer.setDaemon(true);
            producer.start();

            long counted = 0;
            long received = 0;
            long drainUntil = measureEnd + 5_000;
            long expectedCounted = -1;
            while (System.currentTimeMillis() < drainUntil) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(50))) {
                    long now = System.currentTimeMillis();
                    received++;
                    long ts = r.timestamp();
                    if (ts >= warmupEnd && ts < measureEnd) {
                        histogram[(int) Math.min(MAX_MS, Math.max(0, now - ts))]++;
                        counted++;
                    }
                }
                if (!producer.isAlive() && expectedCounted < 0) {
                    expectedCounted = produced.get();
                }
                if (expectedCounted >= 0 && received >= expectedCounted) {
                    break; // everything produced has arrived
                }
            }
            try {
                producer.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("rate_MBps_target", rateMBps);
            out.put("produced_records", produced.get());
            out.put("received_records", received);
            out.put("measured_records", counted);
            out.put("p50_ms", percentile(histogram, counted, 0.50));
            out.put("p99_ms", percentile(histogram, counted, 0.99));
            out.put("max_ms", percentile(histogram, counted, 1.0));
            out.put("warmup_s", warmupSec);
            out.put("measure_s", measureSec);
            if (sendError.get() != null) {
                out.put("producer_error", sendError.get().toString());
            }
            return out;
        }
    }

    private static List<TopicPartition> awaitPartitions(KafkaConsumer<?, ?> consumer, String topic, int partitions) {
        long deadline = System.currentTimeMillis() + 120_000;
        while (true) {
            List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(5));
            if (infos != null && infos.size() >= partitions) {
                List<TopicPartition> tps = new ArrayList<>();
                infos.forEach(i -> tps.add(new TopicPartition(topic, i.partition())));
                return tps;
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("topic " + topic + " did not appear on " + "the destination");
            }
            Bench.sleep(200);
        }
    }

    private static void produce(String bootstrap, String topic, String codec, double rateMBps, long endMs,
                                AtomicLong produced, AtomicReference<Exception> error) {
        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        pp.put(ProducerConfig.ACKS_CONFIG, "1");
        pp.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        pp.put(ProducerConfig.BATCH_SIZE_CONFIG, "65536");
        pp.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
        byte[][] payloads = Payloads.pool();
        double perMs = rateMBps * 1024 * 1024 / Payloads.RECORD_SIZE / 1000.0;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(pp, new ByteArraySerializer(),
            new ByteArraySerializer())) {
            long start = System.currentTimeMillis();
            long sent = 0;
            while (true) {
                long now = System.currentTimeMillis();
                if (now >= endMs) {
                    break;
                }
                long due = (long) ((now - start) * perMs);
                while (sent < due) {
                    producer.send(new ProducerRecord<>(topic, null, System.currentTimeMillis(), null,
                        payloads[(int) (sent % payloads.length)]), (md, e) -> {
                            if (e != null) {
                                error.compareAndSet(null, e);
                            }
                        });
                    sent++;
                }
                Bench.sleep(1);
            }
            producer.flush();
            produced.set(sent);
        } catch (Exception e) {
            error.compareAndSet(null, e);
        }
    }

    static long percentile(long[] histogram, long count, double q) {
        if (count == 0) {
            return -1;
        }
        long rank = Math.max(1, (long) Math.ceil(q * count));
        long seen = 0;
        for (int i = 0; i < histogram.length; i++) {
            seen += histogram[i];
            if (seen >= rank) {
                return i;
            }
        }
        return histogram.length - 1;
    }
}
