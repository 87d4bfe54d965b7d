package io.clustermirror.common;

import com.google.re2j.Pattern;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.TreeSet;

/**
 * Topic names or regular expressions as given to start/stop/pause/resume. A plain name is a regex that
 * matches itself; each pattern must match a whole topic name. Matching takes linear time ({@link NamePatterns}), so
 * no expression a client sends can hold the controller's thread. The mirror controller selects a command's topics with
 * it, and the admin client previews a command's selection with the same rules.
 */
public final class TopicPatterns {
    private final List<Pattern> patterns;

    private TopicPatterns(List<Pattern> patterns) {
        this.patterns = patterns;
    }

    public static TopicPatterns of(Collection<String> expressions) {
        List<Pattern> compiled = new ArrayList<>();
        for (String e : expressions) {
            String trimmed = e.trim();
            if (trimmed.isEmpty()) {
                continue;
            }
            try {
                compiled.add(NamePatterns.compile(trimmed));
            } catch (IllegalArgumentException ex) {
                throw new ClusterMirrorException(MirrorError.INVALID_REQUEST, ex.getMessage() + " and not a topic name");
            }
        }
        return new TopicPatterns(compiled);
    }

    /**
     * The patterns of a command, which must name at least one topic.
     *
     * @throws ClusterMirrorException INVALID_REQUEST when none is given
     */
    public static TopicPatterns required(Collection<String> expressions) {
        TopicPatterns patterns = of(expressions);
        if (patterns.isEmpty()) {
            throw new ClusterMirrorException(MirrorError.INVALID_REQUEST, "no topics given; name topics or regular expressions");
        }
        return patterns;
    }

    public boolean isEmpty() {
        return patterns.isEmpty();
    }

    public boolean matches(String topic) {
        return patterns.stream().anyMatch(p -> p.matcher(topic).matches());
    }

    /** True if one expression is exactly {@code topic}: the operator named the topic, not merely matched it. */
    public boolean names(String topic) {
        return patterns.stream().anyMatch(p -> p.pattern().equals(topic));
    }

    /**
     * The candidates matched by these patterns and by none of {@code excludes}, sorted.
     *
     * @throws ClusterMirrorException {@code noMatch} naming a pattern that matched no candidate at all
     */
    public TreeSet<String> select(Collection<String> candidates, TopicPatterns excludes, MirrorError noMatch, String where) {
        TreeSet<String> selected = new TreeSet<>();
        for (Pattern p : patterns) {
            List<String> hits = candidates.stream().filter(t -> p.matcher(t).matches()).toList();
            if (hits.isEmpty()) {
                throw new ClusterMirrorException(noMatch, "'" + p.pattern() + "' matches no topic " + where);
            }
            hits.stream().filter(t -> !excludes.matches(t)).forEach(selected::add);
        }
        return selected;
    }
}
