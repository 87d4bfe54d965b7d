package io.clustermirror.broker.sync;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Logs what an operator can act on once, not at every round: a problem when it appears or changes (WARN), its
 * end (INFO), and a notable status (INFO) when it changes. Keys name the thing (a topic, group, read step).
 */
final class ProblemLog {
    private static final Logger log = LoggerFactory.getLogger(MetadataSyncManager.class);

    private final String mirror;
    private final Map<String, String> problems = new ConcurrentHashMap<>();
    private final Map<String, String> notes = new ConcurrentHashMap<>();

    ProblemLog(String mirror) {
        this.mirror = mirror;
    }

    /** Something the sync could not do: {@code what} is the step ("read the source ACLs"). */
    void report(String what, Throwable cause) {
        reportMessage(what, "Mirror '" + mirror + "': metadata sync could not " + what + ": " + cause.getClass().getSimpleName()
            + (cause.getMessage() == null ? "" : ": " + cause.getMessage()) + "; retrying at every sync");
    }

    void reportMessage(String key, String message) {
        String previous = problems.put(key, message);
        if (!message.equals(previous)) {
            log.warn(message);
        } else {
            log.debug(message);
        }
    }

    void resolved(String key) {
        if (problems.remove(key) != null) {
            log.info("Mirror '{}': metadata sync could {} again", mirror, key);
        }
    }

    /** The problems reported and not resolved since, by key: what an operator sees as ongoing. */
    Map<String, String> current() {
        return Map.copyOf(problems);
    }

    void note(String key, String message) {
        if (!Objects.equals(notes.put(key, message), message)) {
            log.info(message);
        }
    }
}
