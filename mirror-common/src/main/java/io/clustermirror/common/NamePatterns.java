package io.clustermirror.common;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;

/**
 * Regular expressions over names (topics, groups, topic configs, ACL resources), as given in {@code --topics},
 * {@code --exclude} and the {@code mirror.*.include/exclude} configs. They are compiled with RE2/J, whose matching
 * time is linear in the name's length whatever the expression: a pattern such as {@code (a+)+$} cannot hold the
 * controller's or the sync's thread. The syntax is Java's without backreferences and lookaround.
 */
public final class NamePatterns {
    private NamePatterns() {
    }

    /**
     * @throws IllegalArgumentException naming the expression and what is wrong with it (the message fits after
     *                                  "{@code --topics: }" or a config key)
     */
    public static Pattern compile(String regex) {
        try {
            return Pattern.compile(regex);
        } catch (PatternSyntaxException e) {
            throw new IllegalArgumentException("'" + regex + "' is not a valid regular expression (" + e.getDescription()
                + "; backreferences and lookaround are not supported)", e);
        }
    }
}
