package io.clustermirror.it;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;

import java.time.Duration;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The input of an exactly-once pipeline: a background thread that writes records with keys from a small seeded set
 * ({@code k0} to {@code k19}) and numbered values ({@code v<i>}) at a steady rate with an idempotent acks=all producer,
 * partitioned by key (as Kafka Streams needs: one key's records on one partition), until closed.
 */
final class KeyedInputWriter implements AutoCloseable {
    static final int KEYS = 20;

    private final AtomicBoolean done = new AtomicBoolean();
    private final Queue<Throwable> errors = new ConcurrentLinkedQueue<>();
    private final Thread thread;

    KeyedInputWriter(String bootstrap, String topic, long seed) {
        thread = new Thread(() -> write(bootstrap, topic, seed), topic + "-writer");
        thread.setDaemon(true);
        thread.start();
    }

    private void write(String bootstrap, String topic, long seed) {
        Random keys = new Random(seed);
        try (KafkaProducer<byte[], byte[]> producer = Workloads.producer(bootstrap,
                Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.ACKS_CONFIG, "all"))) {
            for (int i = 0; !done.get(); i++) {
                producer.send(new ProducerRecord<>(topic, Workloads.bytes("k" + keys.nextInt(KEYS)), Workloads.bytes("v" + i)), (metadata, error) -> {
                    if (error != null) {
                        errors.add(error);
                    }
                });
                if (i % 5 == 4) {
                    pace();
                }
            }
        } catch (RuntimeException e) {
            errors.add(e);
        }
    }

    /** About 500 records a second: a steady load, not a synchronisation. */
    private static void pace() {
        try {
            Thread.sleep(10);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops writing, once every record sent is acknowledged; fails if any write failed. */
    @Override
    public void close() throws InterruptedException {
        done.set(true);
        thread.join(Duration.ofSeconds(90).toMillis());
        if (thread.isAlive()) {
            throw new AssertionError("the input writer did not stop");
        }
        if (!errors.isEmpty()) {
            throw new AssertionError("the input writer failed: " + errors.peek(), errors.peek());
        }
    }
}
