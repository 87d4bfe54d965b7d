package io.clustermirror.common.compat;

import org.apache.kafka.common.KafkaException;

/**
 * The largest response a Kafka client of another cluster reads: a size prefix above it closes the connection before
 * anything is allocated, instead of the client allocating whatever four bytes from the peer say (up to 2 GiB).
 *
 * @param maxBytes the largest response size read
 * @param peer     who answers, as the error names it (for example {@code "the source of mirror 'm'"})
 * @param remedy   what the operator can do about a larger response (which setting, which config to check)
 */
public record ResponseBound(int maxBytes, String peer, String remedy) {
    public ResponseBound {
        if (maxBytes <= 0) {
            throw new IllegalArgumentException("a response bound must be positive, not " + maxBytes);
        }
    }

    /** The error a response above the bound fails its connection with; Kafka's client logs it, naming the node. */
    TooLargeException tooLarge(int size) {
        return new TooLargeException(peer + " answered with a response of " + size + " bytes, above the bound of " + maxBytes
            + " bytes: the connection is closed without reading it. " + remedy);
    }

    /** A peer announced a response above the bound; its connection is closed, the client retries as after a disconnect. */
    public static final class TooLargeException extends KafkaException {
        private static final long serialVersionUID = 1L;

        TooLargeException(String message) {
            super(message);
        }
    }
}
