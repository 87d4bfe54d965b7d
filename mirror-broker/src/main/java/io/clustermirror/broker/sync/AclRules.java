package io.clustermirror.broker.sync;

import io.clustermirror.common.MirrorConfig;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

import java.util.Optional;
import java.util.Set;

/**
 * Which source ACLs a mirror copies to the destination, and why: the ACL part of {@link SyncPlanner}. Pure.
 *
 * <p>An ACL copied from the source grants (or denies) rights on the destination, so by default the sync copies only
 * what gives the source's principals access to what the mirror brings over: ALLOW entries of a named principal on
 * <ul>
 *   <li>a mirrored topic (LITERAL; the caller passes the topics the sync keeps in step, {@link SyncPlanner#syncedTopics}),</li>
 *   <li>a group whose offsets the sync copies (LITERAL; {@link SyncPlanner#groupIncluded}),</li>
 *   <li>a PREFIXED topic or group resource whose prefix lies inside the names the mirror takes for itself
 *       ({@link #prefixInside}).</li>
 * </ul>
 * Each other kind is copied only when its setting says so: DENY entries ({@value MirrorConfig#ACL_SYNC_DENY}), the
 * {@code *} resource and wildcard principals such as {@code User:*} ({@value MirrorConfig#ACL_SYNC_WILDCARD}), topics
 * and groups outside the mirror ({@value MirrorConfig#ACL_SYNC_UNMIRRORED}), resource types other than TOPIC and GROUP
 * ({@value MirrorConfig#ACL_SYNC_RESOURCE_TYPES}; CLUSTER also when {@value MirrorConfig#CLUSTER_RESOURCE_NAME} is an
 * entry of {@value MirrorConfig#ACL_INCLUDE}, its form before that setting existed). Host restrictions are copied as
 * they are: they only narrow an entry. Every copied ACL's resource name must also match
 * {@value MirrorConfig#ACL_INCLUDE}; a name of the destination's own internal resources ({@code __...}, or a prefix
 * that covers them) only when listed there exactly.
 */
final class AclRules {
    private static final String INTERNAL_PREFIX = "__";
    private static final String WILDCARD = ResourcePattern.WILDCARD_RESOURCE;
    /** Characters that make a regex more than its literal text (RE2/Java syntax). */
    private static final String REGEX_META = "\\.[]{}()*+?^$|";
    private static final String QUANTIFIERS = "*+?{";

    private AclRules() {
    }

    /**
     * Why the sync copies this source ACL, for the log; empty if it does not.
     *
     * @param mirroredTopics the topics the sync keeps in step
     */
    static Optional<String> whyCopied(MirrorConfig config, Set<String> mirroredTopics, AclBinding acl) {
        ResourcePattern resource = acl.pattern();
        if (!nameIncluded(config, resource) || !typeSynced(config, resource.resourceType())) {
            return Optional.empty();
        }
        if (acl.entry().permissionType() != AclPermissionType.ALLOW && !config.isTrue(MirrorConfig.ACL_SYNC_DENY)) {
            return Optional.empty();
        }
        boolean wildcardPrincipal = isWildcardPrincipal(acl.entry().principal());
        if (wildcardPrincipal && !config.isTrue(MirrorConfig.ACL_SYNC_WILDCARD)) {
            return Optional.empty();
        }
        String opted = (acl.entry().permissionType() == AclPermissionType.ALLOW ? "" : ", " + MirrorConfig.ACL_SYNC_DENY + "=true")
            + (wildcardPrincipal ? ", " + MirrorConfig.ACL_SYNC_WILDCARD + "=true" : "");
        return resourceReason(config, mirroredTopics, resource).map(why -> why + opted);
    }

    private static Optional<String> resourceReason(MirrorConfig config, Set<String> mirroredTopics, ResourcePattern resource) {
        String name = resource.name();
        if (name.equals(WILDCARD)) {
            return config.isTrue(MirrorConfig.ACL_SYNC_WILDCARD)
                ? Optional.of("the * resource, " + MirrorConfig.ACL_SYNC_WILDCARD + "=true") : Optional.empty();
        }
        boolean prefixed = resource.patternType() == PatternType.PREFIXED;
        Optional<String> inside = switch (resource.resourceType()) {
            case TOPIC -> prefixed
                ? prefixInside(config, MirrorConfig.TOPICS_INCLUDE, MirrorConfig.TOPICS_EXCLUDE, name)
                    .map(p -> "prefix inside " + MirrorConfig.TOPICS_INCLUDE + " entry '" + p + "'")
                : Optional.of("mirrored topic").filter(why -> mirroredTopics.contains(name));
            case GROUP -> prefixed
                ? prefixInside(config, MirrorConfig.GROUPS_INCLUDE, MirrorConfig.GROUPS_EXCLUDE, name)
                    .map(p -> "prefix inside " + MirrorConfig.GROUPS_INCLUDE + " entry '" + p + "'")
                : Optional.of("group whose offsets the mirror syncs").filter(why -> SyncPlanner.groupIncluded(config, name));
            default -> Optional.of("resource type " + resource.resourceType() + " opted in");
        };
        if (inside.isPresent()) {
            return inside;
        }
        return config.isTrue(MirrorConfig.ACL_SYNC_UNMIRRORED)
            ? Optional.of("not mirrored, " + MirrorConfig.ACL_SYNC_UNMIRRORED + "=true") : Optional.empty();
    }

    /**
     * The resource name matches {@value MirrorConfig#ACL_INCLUDE}. Names of the destination's own internal resources
     * (Kafka's {@code __consumer_offsets}, this cluster's {@code __mirror_*}, and prefixes that cover them, such as
     * {@code _}) govern the destination itself, not mirrored data: only an entry that lists the name exactly selects them.
     */
    private static boolean nameIncluded(MirrorConfig config, ResourcePattern resource) {
        String name = resource.name();
        if (coversInternalNames(resource.patternType(), name)) {
            return config.listsExactly(MirrorConfig.ACL_INCLUDE, name);
        }
        return config.matchesAny(MirrorConfig.ACL_INCLUDE, name);
    }

    private static boolean coversInternalNames(PatternType patternType, String name) {
        return name.startsWith(INTERNAL_PREFIX) || (patternType == PatternType.PREFIXED && INTERNAL_PREFIX.startsWith(name));
    }

    private static boolean typeSynced(MirrorConfig config, ResourceType type) {
        return config.aclSyncResourceTypes().contains(type) || (type == ResourceType.CLUSTER
            && config.listsExactly(MirrorConfig.ACL_INCLUDE, MirrorConfig.CLUSTER_RESOURCE_NAME));
    }

    /** {@code User:*} and any other principal type with the name {@code *}: every client of that type. */
    static boolean isWildcardPrincipal(String principal) {
        return principal.substring(principal.indexOf(':') + 1).equals(WILDCARD);
    }

    /**
     * Whether every name that starts with {@code prefix} is one the mirror takes for itself, proven from the patterns,
     * not guessed: some entry of {@code includeKey} has the form {@code L.*} with {@code L} literal text (letters,
     * digits, {@code -}, {@code _}, escaped punctuation such as {@code \.}) and {@code prefix} starts with {@code L};
     * and no entry of {@code excludeKey} can match a name that starts with {@code prefix}: the literal text an exclude
     * entry starts with ({@link #literalStart}) is neither a prefix of {@code prefix} nor starts with it. Every other
     * form (an include such as {@code orders.v1.*}, whose {@code .} is any character, or {@code (orders|payments)-.*})
     * proves nothing: such a prefixed ACL is copied only with {@value MirrorConfig#ACL_SYNC_UNMIRRORED}, or written as
     * literal ACLs. A prefix that covers internal names ({@code __}) is never inside.
     *
     * @return the include entry that proves it
     */
    static Optional<String> prefixInside(MirrorConfig config, String includeKey, String excludeKey, String prefix) {
        if (prefix.isEmpty() || coversInternalNames(PatternType.PREFIXED, prefix)) {
            return Optional.empty();
        }
        boolean excludable = config.patterns(excludeKey).stream().map(p -> literalStart(p.pattern()))
            .anyMatch(start -> start.startsWith(prefix) || prefix.startsWith(start));
        if (excludable) {
            return Optional.empty();
        }
        return config.patterns(includeKey).stream().map(p -> p.pattern())
            .filter(p -> p.endsWith(".*") && isLiteral(p.substring(0, p.length() - 2)))
            .filter(p -> prefix.startsWith(literalStart(p)))
            .findFirst();
    }

    /** True if {@code regex} matches exactly its literal text. */
    static boolean isLiteral(String regex) {
        return literalLength(regex) == regex.length();
    }

    /**
     * Text that every name {@code regex} fully matches starts with: its leading literal characters, less one that a
     * quantifier makes optional or repeatable; empty for an alternation anywhere (its branches start differently).
     */
    static String literalStart(String regex) {
        int end = literalLength(regex);
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < end; i++) {
            char c = regex.charAt(i);
            if (c == '\\') {
                c = regex.charAt(++i);
            }
            text.append(c);
        }
        return text.toString();
    }

    /** How many characters of {@code regex} form its fixed literal start (see {@link #literalStart}). */
    private static int literalLength(String regex) {
        if (regex.indexOf('|') >= 0) {
            return 0;
        }
        int i = 0;
        while (i < regex.length()) {
            char c = regex.charAt(i);
            int next;
            if (c == '\\') {
                if (i + 1 >= regex.length() || Character.isLetterOrDigit(regex.charAt(i + 1))) {
                    break; // a class such as \d or \w, or a dangling backslash
                }
                next = i + 2;
            } else if (REGEX_META.indexOf(c) < 0) {
                next = i + 1;
            } else {
                break;
            }
            if (next < regex.length() && QUANTIFIERS.indexOf(regex.charAt(next)) >= 0) {
                break;
            }
            i = next;
        }
        return i;
    }
}
