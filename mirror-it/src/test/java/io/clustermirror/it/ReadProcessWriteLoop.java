package io.clustermirror.it;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A plain exactly-once read-process-write application in a background thread: a {@code read_committed} consumer of
 * the input topic in a group, and a transactional producer that, per poll, writes one result per input record to the
 * same partition of the output topic and commits the consumer's offsets in the same transaction. Each result's value
 * names its input exactly ({@code in-<partition>-<offset>:<input value>}), so that a check can match them one to one.
 * Any error fails the application (it does not abort and retry: a test wants to see it).
 */
final class ReadProcessWriteLoop implements AutoCloseable {
    private final AtomicBoolean done = new AtomicBoolean();
    private final AtomicLong transactions = new AtomicLong();
    private final Queue<Throwable> errors = new ConcurrentLinkedQueue<>();
    private final Thread thread;

    ReadProcessWriteLoop(String bootstrap, String group, String input, String output) {
        thread = new Thread(() -> run(bootstrap, group, input, output), group + "-loop");
        thread.setDaemon(true);
        thread.start();
    }

    /** The value of the result of an input record. */
    static String result(int partition, long offset, String inputValue) {
        return "in-" + partition + "-" + offset + ":" + inputValue;
    }

    private void run(String bootstrap, String group, String input, String output) {
        // A partition the group has no offset for is read from its start: nothing is skipped, a duplicate shows.
        try (KafkaConsumer<byte[], byte[]> consumer = Workloads.transactionalAppConsumer(bootstrap, group);
             KafkaProducer<byte[], byte[]> producer = Workloads.producer(bootstrap, Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, group + "-tx"))) {
            producer.initTransactions();
            consumer.subscribe(List.of(input));
            while (!done.get()) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                if (records.isEmpty()) {
                    continue;
                }
                producer.beginTransaction();
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    String value = result(r.partition(), r.offset(), new String(r.value(), StandardCharsets.UTF_8));
                    producer.send(new ProducerRecord<>(output, r.partition(), r.key(), Workloads.bytes(value)));
                    offsets.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                }
                producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                producer.commitTransaction();
                transactions.incrementAndGet();
            }
        } catch (RuntimeException e) {
            errors.add(e);
        }
    }

    /** How many transactions the application has committed. */
    long transactions() {
        return transactions.get();
    }

    /** Throws if the application failed: a wait for its progress then ends at once, naming why. */
    void assertHealthy() {
        if (!errors.isEmpty()) {
            throw new AssertionError("the read-process-write application failed: " + errors.peek(), errors.peek());
        }
    }

    /** Stops the application after its current transaction; fails if it failed. */
    @Override
    public void close() throws InterruptedException {
        done.set(true);
        thread.join(Duration.ofSeconds(90).toMillis());
        if (thread.isAlive()) {
            throw new AssertionError("the read-process-write application did not stop");
        }
        assertHealthy();
    }
}
