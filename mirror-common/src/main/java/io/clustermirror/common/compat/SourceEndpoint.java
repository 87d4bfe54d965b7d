package io.clustermirror.common.compat;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.protocol.Errors;

import java.util.Map;

/**
 * One source broker as a mirror's fetcher sees it: the connection and the incremental fetch session with it. The
 * fetch loop states which partitions it wants from which offsets; the endpoint turns that into a full or incremental
 * consumer Fetch (replica id -1), sends it and hands back the outcome in this package's terms.
 *
 * <p>Threads: {@link #fetch} and {@link #close} are called by the owning fetcher thread only; {@link #initiateClose}
 * and {@link #sessionId} by any thread.
 */
public interface SourceEndpoint {
    Node node();

    /**
     * Connects if needed, sends one Fetch for exactly {@code partitions} (a partition left out is forgotten by the
     * session) and waits for its outcome.
     */
    Outcome fetch(Map<TopicPartition, FetchPosition> partitions);

    /** The next fetch opens a new session: the last response was not handled to its end. */
    void resetSession(Throwable cause);

    /** Current fetch session id (0: none yet, or sessionless). */
    int sessionId();

    /** Cuts a fetch in progress short (it returns {@link Closed}); no fetch starts after it. */
    void initiateClose();

    /** Releases the connection; after {@link #initiateClose}. */
    void close();

    /** What one fetch came to. */
    sealed interface Outcome permits Fetched, SessionError, Unreachable, AuthenticationFailed, Closed {
    }

    /** The session took the response: per-partition data and errors of the partitions it covers. */
    record Fetched(Map<TopicPartition, FetchedPartition> partitions) implements Outcome {
    }

    /** The source answered with a top-level error; the session has already reacted to it (e.g. starts anew). */
    record SessionError(Errors error) implements Outcome {
    }

    /** The broker could not be reached or the connection broke (connect failure or timeout, disconnect, no common version). */
    record Unreachable(String why) implements Outcome {
    }

    /** The source refused the mirror's credentials while connecting. */
    record AuthenticationFailed(AuthenticationException cause) implements Outcome {
    }

    /** {@link #initiateClose} was called. */
    record Closed() implements Outcome {
    }
}
