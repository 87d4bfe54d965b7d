package io.clustermirror.broker.controller;

import io.clustermirror.broker.auth.MirrorAwareAuthorizer;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.image.MirrorImage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Keeps mirror topics read-only when the mirror state that names them is lost: {@code __mirror_metadata} or
 * {@code __mirror_state} deleted or re-created (a new topic id), or records deleted from them (a log start offset above
 * 0: compaction alone never moves it). Without this, a broker that replays what is left finds no mirror topic and lets
 * clients write to topics that still hold mirrored data and mirrored producer state.
 *
 * <p>Invariant: when the state is lost, every topic that was a read-only mirror topic in the latest complete image
 * stays read-only ({@link MirrorImage#fencedTopics()}) until a complete image of the new state knows it again (its rules
 * then apply). The loss is seen live (the tailer checks the topic ids) and at start (ids that differ from those this
 * broker loaded before, or records deleted). The broker's own record of what it knew (topic ids, read-only topics, fenced
 * topics) is a small file in its metadata log directory, so a restart forgets nothing; a broker that never loaded the lost
 * state (new, or its directory replaced) cannot know what to fence.
 *
 * <p>Not thread-safe: the tailer thread only.
 */
final class InternalStateFence {
    private static final Logger log = LoggerFactory.getLogger(InternalStateFence.class);
    static final String FILE_NAME = "cluster-mirror-known-state.properties";
    static final long READ_ONLY_REFRESH_MS = 5_000;

    private final Path file;
    /** Topic ids of the internal topics whose records this broker loaded, by topic name; empty if it never loaded any. */
    private Map<String, String> topicIds;
    /** Read-only mirror topics of the latest complete image. */
    private Set<String> readOnly;
    private Set<String> fenced;
    /** The topics (by identity: images share the map while no topic changes) last evaluated, and the read-only ones. */
    private Map<String, ?> evaluatedTopics;
    private Set<String> evaluatedReadOnly = Set.of();
    private long reevaluateMs;
    /** The latest complete image: what a loss is judged against. */
    private MirrorImage lastComplete = MirrorImage.EMPTY;
    /** Whether the incarnation started last lost {@code __mirror_state} alone, and went on from {@link #lastComplete}. */
    private boolean onlyStateLost;

    /** @param file where this broker keeps its record, or null to keep it in memory only (tests) */
    InternalStateFence(Path file) {
        this.file = file;
        Properties saved = load(file);
        this.topicIds = InternalTopics.ALL.stream().filter(t -> saved.getProperty("topic.id." + t) != null)
            .collect(Collectors.toMap(t -> t, t -> saved.getProperty("topic.id." + t)));
        this.readOnly = names(saved.getProperty("read.only.topics"));
        this.fenced = names(saved.getProperty("fenced.topics"));
        if (!fenced.isEmpty()) {
            logFenced("are still fenced after the loss of the mirror state recorded before this broker restarted");
        }
    }

    /**
     * The tailer starts reading an incarnation of the internal topics from its beginning.
     *
     * <p>When only {@code __mirror_state} was lost (deleted, re-created, or records deleted from it) while this broker had
     * the state loaded, the desired state in {@code __mirror_metadata} is intact: the new incarnation starts from the
     * state this broker last knew, so that a stopped topic stays writable and a mirror topic read-only, and the
     * partitions' leaders go on from it and record it again. Losing {@code __mirror_metadata} loses which topics are
     * mirrored: every read-only mirror topic is fenced.
     *
     * @param ids            topic id by name of {@code __mirror_metadata} and {@code __mirror_state}
     * @param recordsDeleted those of them with a partition that starts above offset 0
     * @return the image to replay the records onto: empty but for the fenced topics, or, if only {@code __mirror_state} was
     *         lost, the latest complete image
     */
    MirrorImage startIncarnation(Map<String, String> ids, Set<String> recordsDeleted) {
        MirrorImage start = MirrorImage.EMPTY;
        onlyStateLost = false;
        boolean metadataKept = Objects.equals(topicIds.get(InternalTopics.METADATA), ids.get(InternalTopics.METADATA))
            && !recordsDeleted.contains(InternalTopics.METADATA);
        boolean stateLost = !Objects.equals(topicIds.get(InternalTopics.STATE), ids.get(InternalTopics.STATE))
            || recordsDeleted.contains(InternalTopics.STATE);
        if (!topicIds.isEmpty() && metadataKept && stateLost && !lastComplete.topics().isEmpty()) {
            start = lastComplete; // the metadata replayed onto it again changes nothing; the new state's records go on from it
            onlyStateLost = true;
            log.error("Cluster Mirror lost {} (the actual state of each mirror partition: topic id {} before, {} now{}); the "
                    + "desired state in {} is intact. STOPPED topics stay writable: {}; mirror topics stay read-only: {}. Each "
                    + "partition's leader goes on from the state this broker knew and records it again; nothing to do unless "
                    + "this broker restarts before that (then its stopped partitions stop again, without truncation)",
                InternalTopics.STATE, topicIds.get(InternalTopics.STATE), ids.get(InternalTopics.STATE),
                recordsDeleted.contains(InternalTopics.STATE) ? ", records deleted" : "", InternalTopics.METADATA,
                writableMirrorTopics(lastComplete), readOnlyTopics(lastComplete, true));
        } else if (!topicIds.isEmpty() && !topicIds.equals(ids)) {
            lost("the internal topics were deleted or re-created (topic ids " + topicIds + " before, " + ids + " now)");
        } else if (!recordsDeleted.isEmpty()) {
            lost("records were deleted from " + recordsDeleted + " (a partition's log start offset is above 0)");
        }
        topicIds = Map.copyOf(ids);
        readOnly = Set.of(); // until the new incarnation is loaded: it alone tells what is read-only now
        save();
        return start.withFencedTopics(fenced);
    }

    /** Whether the incarnation started last lost {@code __mirror_state} alone: the image goes on from the state known before. */
    boolean onlyStateLost() {
        return onlyStateLost;
    }

    /**
     * The internal topics are gone ({@code __mirror_metadata} at least): everything read-only now is fenced until the state
     * names it again.
     *
     * @param missing the internal topics that do not exist
     */
    void topicsDeleted(Set<String> missing) {
        if (!topicIds.isEmpty()) {
            lost("the internal topics " + new TreeSet<>(missing) + " were deleted");
            topicIds = Map.of();
            save();
        }
    }

    /**
     * The image the tailer publishes next, with its fenced topics.
     *
     * @param complete whether {@code next} holds everything committed when the incarnation started being read: only a
     *                 complete image may lift a fence or say what is read-only
     */
    MirrorImage publish(MirrorImage next, boolean complete) {
        if (!complete) {
            return next.withFencedTopics(fenced);
        }
        lastComplete = next;
        Set<String> nowReadOnly = readOnlyTopics(next, false);
        Set<String> known = fenced.stream().filter(t -> next.topic(t).isPresent()).collect(Collectors.toCollection(TreeSet::new));
        Set<String> nextFenced = new TreeSet<>(fenced);
        nextFenced.removeAll(known);
        if (!known.isEmpty()) {
            log.info("The mirror state names topics {} again: they are no longer fenced, the state's rules apply", known);
        }
        boolean changed = !nowReadOnly.equals(readOnly) || !nextFenced.equals(fenced);
        readOnly = nowReadOnly;
        fenced = nextFenced;
        if (changed) {
            save();
        }
        return next.withFencedTopics(fenced);
    }

    Set<String> fenced() {
        return fenced;
    }

    /**
     * The read-only mirror topics of a complete image. The rule looks at every partition state, so it is evaluated again
     * only when the topics changed or {@value #READ_ONLY_REFRESH_MS} ms passed: in between, a topic that was just stopped
     * still counts as read-only. A loss evaluates it again ({@code now}): a topic stopped just before stays writable.
     */
    private Set<String> readOnlyTopics(MirrorImage image, boolean now) {
        long nowMs = System.currentTimeMillis();
        if (now || image.topics() != evaluatedTopics || nowMs >= reevaluateMs) {
            evaluatedReadOnly = image.topics().keySet().stream()
                .filter(t -> MirrorAwareAuthorizer.readOnlyMirrorOf(image, t).isPresent()).collect(Collectors.toCollection(TreeSet::new));
            evaluatedTopics = image.topics();
            reevaluateMs = nowMs + READ_ONLY_REFRESH_MS;
        }
        return evaluatedReadOnly;
    }

    private static final String RECOVERY = "To mirror them again, re-create their mirror (--create) and, for each topic, "
        + "delete it (kafka-topics.sh --delete: allowed for a fenced topic) and --start it; see docs/operations.md, 'Losing an internal "
        + "topic'";

    /** The mirror topics of a complete image that clients may write: stopped on every partition. */
    private Set<String> writableMirrorTopics(MirrorImage image) {
        Set<String> writable = new TreeSet<>(image.topics().keySet());
        writable.removeAll(readOnlyTopics(image, true));
        return writable;
    }

    private void lost(String why) {
        fenced = new TreeSet<>(fenced);
        // What the latest complete image says now: a topic whose stop completed a moment ago is not fenced.
        fenced.addAll(lastComplete == MirrorImage.EMPTY ? readOnly : readOnlyTopics(lastComplete, true));
        readOnly = Set.of();
        log.error("Cluster Mirror lost its state: {}. Every topic that was a read-only mirror topic stays read-only (fenced): {}. {}",
            why, fenced, RECOVERY);
    }

    private void logFenced(String why) {
        log.error("Topics {} {}. {}", fenced, why, RECOVERY);
    }

    private static Set<String> names(String csv) {
        return csv == null || csv.isBlank() ? Set.of()
            : Arrays.stream(csv.split(",")).map(String::trim).collect(Collectors.toCollection(TreeSet::new));
    }

    private static Properties load(Path file) {
        Properties props = new Properties();
        if (file != null && Files.exists(file)) {
            try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                props.load(in);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + file, e);
            }
        }
        return props;
    }

    /** Writes the record atomically (a crash leaves the old or the new one). */
    private void save() {
        if (file == null) {
            return;
        }
        Properties props = new Properties();
        topicIds.forEach((t, id) -> props.setProperty("topic.id." + t, id));
        props.setProperty("read.only.topics", String.join(",", readOnly));
        props.setProperty("fenced.topics", String.join(",", fenced));
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try (Writer out = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
            props.store(out, "Cluster Mirror: what this broker knew of the mirror state (see docs/operations.md before editing)");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + tmp, e);
        }
        try {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }
}
