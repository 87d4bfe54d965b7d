package io.clustermirror.it;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueStore;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A Kafka Streams application with exactly-once v2 that counts the input's records per key and writes every new count
 * to the output topic as {@code "<count>"}: input, groupByKey, count into the store {@link #STORE} (whose changelog is
 * {@code <application.id>-counts-changelog}), output. No record cache, so every update reaches the output and the
 * changelog; a short commit interval, so transactions are small and frequent.
 */
final class CountingStreamsApp implements AutoCloseable {
    static final String STORE = "counts";

    private final KafkaStreams streams;
    private final Queue<Throwable> errors = new ConcurrentLinkedQueue<>();

    CountingStreamsApp(String bootstrap, String applicationId, String input, String output, Path stateDir) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
            .groupByKey()
            .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as(STORE))
            .toStream()
            .mapValues(count -> Long.toString(count))
            .to(output, Produced.with(Serdes.String(), Serdes.String()));
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        streams = new KafkaStreams(builder.build(), props);
        streams.setUncaughtExceptionHandler(e -> {
            errors.add(e);
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        streams.start();
    }

    /** Throws if the application failed: a wait for its progress then ends at once, naming why. */
    void assertHealthy() {
        if (!errors.isEmpty() || streams.state() == KafkaStreams.State.ERROR) {
            throw new AssertionError("the Kafka Streams application failed (" + streams.state() + "): " + errors.peek(), errors.peek());
        }
    }

    /** Closes the application; fails if it failed or did not close in time. */
    @Override
    public void close() {
        boolean closed = streams.close(Duration.ofSeconds(60));
        assertHealthy();
        if (!closed) {
            throw new AssertionError("the Kafka Streams application did not close in 60 s");
        }
    }
}
