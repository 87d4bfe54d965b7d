package io.clustermirror.broker.sync;

import io.clustermirror.common.DesiredState;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.HeldChange;
import io.clustermirror.common.records.MirrorAclRecord;
import io.clustermirror.common.records.MirrorTopicRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Decides one sync round of one mirror: source view + destination view + image + the time ->
 * actions. Pure: no I/O, no clock of its own; {@link SyncExecutor} performs the actions.
 *
 * <p>Rules:
 * <ul>
 *   <li><b>Synced topics</b> are the mirror's topics whose desired state is MIRRORING. PAUSED topics are not synced
 *       (a paused topic is not synced) and a STOPPED topic belongs to the destination: its
 *       configs, partitions and group offsets are never touched again.</li>
 *   <li><b>Partitions</b>: a synced topic with more source partitions than the destination (or than the image
 *       records) is grown, unless the source topic was recreated (another id: its partitions fail instead).</li>
 *   <li><b>Topic configs</b>: over the configs set on the topic (not defaults) and not excluded
 *       ({@link MirrorConfig#isTopicConfigExcluded}), set what differs and remove what the source no longer sets.
 *       Excluded configs are neither set nor removed. The copied configs as they are once set are declared
 *       ({@link io.clustermirror.common.records.SyncedTopicConfigsRecord}) whenever the declaration is behind, even with
 *       nothing to change: only declared values pass the controller's config policy.</li>
 *   <li><b>Held changes</b> ({@link MirrorConfig#SOURCE_DESTRUCTIVE_POLICY} {@code hold}): a config change that deletes
 *       sooner ({@link DestructiveTopicConfigs}) and a growth by more than {@link MirrorConfig#PARTITIONS_MAX_GROWTH}
 *       partitions are copied only once released (their hold has passed since the topic's record first held them, or an
 *       operator applied them); the round records exactly the changes it holds in the topic's record
 *       ({@link SyncAction.HoldChanges}), so a change is held from when it was first seen, forgotten once copied or gone,
 *       and one an operator rejected stays uncopied while the source keeps it.</li>
 *   <li><b>Group offsets</b> of consumer and share groups matching {@code mirror.groups.include} (default: every
 *       group) and not {@code mirror.groups.exclude}, both kinds alike:
 *       for partitions of synced topics that exist on the destination, the source's offset (committed offset of a
 *       consumer group, share-partition start offset of a share group) clamped to
 *       [destination log start, destination log end], without the leader epoch, keeping the metadata; written
 *       only where it differs, and only for groups with no active members on the destination.</li>
 *   <li><b>ACLs</b>: source ACLs that {@link AclRules} selects (by default ALLOW entries of named principals on
 *       mirrored topics and synced groups) and that the destination lacks are created (and recorded as the
 *       mirror's). ACLs the mirror recorded that are no longer wanted are deleted. An ACL the mirror did not create
 *       is never deleted, and the ACLs on a topic of the mirror that is not MIRRORING are left as they are: a
 *       STOPPED topic's clients keep their rights after a failover.</li>
 *   <li><b>Auto-discovery</b>: source topics matching {@code mirror.topics.include}, not {@code mirror.topics.exclude},
 *       not the mirror's internal topics and in no mirror yet, start mirroring.</li>
 * </ul>
 * A part of a view that is null (could not be read) yields no action for that part.
 */
final class SyncPlanner {
    private SyncPlanner() {
    }

    /** The mirror's topics the sync keeps in step: desired state MIRRORING. */
    static List<MirrorTopicRecord> syncedTopics(MirrorImage image, String mirror) {
        return image.topicsOf(mirror).stream().filter(t -> t.desired() == DesiredState.MIRRORING).toList();
    }

    /** True if the sync copies the offsets of this group. */
    static boolean groupIncluded(MirrorConfig config, String group) {
        return config.matchesAny(MirrorConfig.GROUPS_INCLUDE, group) && !config.matchesAny(MirrorConfig.GROUPS_EXCLUDE, group);
    }

    static List<SyncAction> plan(MirrorConfig config, MirrorImage image, SourceView source, DestinationView destination, long nowMs) {
        String mirror = config.name();
        List<SyncAction> actions = new ArrayList<>();
        List<MirrorTopicRecord> synced = syncedTopics(image, mirror);
        discover(config, image, source, actions);
        for (MirrorTopicRecord t : synced) {
            SourceView.Topic st = source.topics() == null ? null : source.topics().get(t.topic());
            DestinationView.Topic dt = destination.topics() == null ? null : destination.topics().get(t.topic());
            if (st == null || dt == null || (t.sourceTopicId() != null && !t.sourceTopicId().equals(st.topicId()))) {
                continue;
            }
            Holds holds = new Holds(config, t, nowMs);
            // A growth counts from the partitions the mirror created (its record), not from the destination's view: a
            // broker's metadata can show a large creation's first step alone for tens of seconds, which is no growth. A
            // destination already grown past the record (a growth whose record has not landed) is grown to the source's
            // count again, which records it.
            if (st.partitions() > t.partitions()) {
                int growth = st.partitions() - t.partitions();
                boolean tooMany = growth > config.getInt(MirrorConfig.PARTITIONS_MAX_GROWTH);
                if (holds.copies(HeldChange.Kind.PARTITIONS, HeldChange.PARTITIONS_NAME, String.valueOf(st.partitions()), tooMany)) {
                    actions.add(new SyncAction.AddPartitions(t.topic(), st.partitions()));
                }
            }
            topicConfigs(config, image, t, st, dt, holds).ifPresent(actions::add);
            holds.changed().ifPresent(actions::add);
        }
        groups(config, synced, source, destination, actions);
        acls(config, image, source, destination, actions);
        return actions;
    }

    private static void discover(MirrorConfig config, MirrorImage image, SourceView source, List<SyncAction> actions) {
        if (source.topicNames() == null || config.patterns(MirrorConfig.TOPICS_INCLUDE).isEmpty()) {
            return;
        }
        List<String> found = new TreeSet<>(source.topicNames()).stream()
            .filter(t -> config.matchesAny(MirrorConfig.TOPICS_INCLUDE, t))
            .filter(t -> !config.matchesAny(MirrorConfig.TOPICS_EXCLUDE, t))
            .filter(t -> !InternalTopics.isClusterOwned(t) && image.topic(t).isEmpty())
            .toList();
        if (!found.isEmpty()) {
            actions.add(new SyncAction.StartTopics(found));
        }
    }

    /**
     * The changes of one topic this round holds back, against those its record holds: which may be copied, and whether
     * the record must change.
     */
    private static final class Holds {
        private final MirrorTopicRecord topic;
        private final boolean holding;
        private final long holdMs;
        private final long nowMs;
        private final List<HeldChange> found = new ArrayList<>();

        Holds(MirrorConfig config, MirrorTopicRecord topic, long nowMs) {
            this.topic = topic;
            this.holding = config.holdsDestructiveChanges();
            this.holdMs = config.destructiveHoldMs();
            this.nowMs = nowMs;
        }

        /** True if the change may be copied this round: it is not destructive, nothing is held, or it is released. */
        boolean copies(HeldChange.Kind kind, String name, String value, boolean destructive) {
            if (!holding || !destructive) {
                return true;
            }
            HeldChange change = HeldChange.held(kind, name, value, nowMs);
            found.add(change);
            return topic.heldChanges().stream().filter(change::sameChange).anyMatch(h -> h.released(nowMs, holdMs));
        }

        /** The action recording what is held now, if it is not what the record holds. */
        Optional<SyncAction> changed() {
            List<HeldChange> recorded = topic.heldChanges();
            boolean same = recorded.size() == found.size() && found.stream().allMatch(f -> recorded.stream().anyMatch(f::sameChange));
            return same ? Optional.empty() : Optional.of(new SyncAction.HoldChanges(topic.topic(), found));
        }
    }

    private static Optional<SyncAction> topicConfigs(MirrorConfig config, MirrorImage image, MirrorTopicRecord t, SourceView.Topic st,
                                                     DestinationView.Topic dt, Holds holds) {
        String topic = t.topic();
        if (st.configs() == null || dt.configs() == null) {
            return Optional.empty();
        }
        Map<String, String> set = new TreeMap<>();
        new TreeMap<>(st.configs()).forEach((k, v) -> {
            String now = dt.configs().get(k);
            if (!config.isTopicConfigExcluded(k) && !v.equals(now)
                    && holds.copies(HeldChange.Kind.CONFIG, k, v, DestructiveTopicConfigs.deletesSooner(k, now, v))) {
                set.put(k, v);
            }
        });
        Set<String> delete = new TreeSet<>();
        new TreeMap<>(dt.configs()).forEach((k, now) -> {
            if (!config.isTopicConfigExcluded(k) && !st.configs().containsKey(k)
                    && holds.copies(HeldChange.Kind.CONFIG, k, null, DestructiveTopicConfigs.deletesSooner(k, now, null))) {
                delete.add(k);
            }
        });
        Map<String, String> synced = new TreeMap<>(dt.configs());
        synced.keySet().removeIf(config::isTopicConfigExcluded);
        synced.putAll(set);
        synced.keySet().removeAll(delete);
        boolean declared = image.syncedTopicConfigs(topic).filter(d -> d.mirror().equals(t.mirror()) && d.configs().equals(synced)).isPresent();
        return set.isEmpty() && delete.isEmpty() && declared ? Optional.empty()
            : Optional.of(new SyncAction.AlterTopicConfigs(topic, set, delete, synced));
    }

    private static void groups(MirrorConfig config, List<MirrorTopicRecord> synced, SourceView source, DestinationView destination,
                               List<SyncAction> actions) {
        if (source.groupOffsets() == null || destination.groups() == null) {
            return;
        }
        Set<String> syncedNames = new HashSet<>();
        synced.forEach(t -> syncedNames.add(t.topic()));
        for (SyncedGroup group : new TreeSet<>(source.groupOffsets().keySet())) {
            if (!groupIncluded(config, group.id())) {
                continue;
            }
            DestinationView.Group dg = destination.groups().get(group);
            if (dg == null) {
                continue; // the destination side could not be read
            }
            Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
            source.groupOffsets().get(group).forEach((tp, committed) -> {
                Long start = destination.logStart().get(tp);
                Long end = destination.logEnd().get(tp);
                if (committed == null || !syncedNames.contains(tp.topic()) || start == null || end == null) {
                    return;
                }
                long offset = Math.max(start, Math.min(end, committed.offset()));
                if (!Objects.equals(dg.committed().get(tp), offset)) {
                    offsets.put(tp, new OffsetAndMetadata(offset, Optional.empty(), committed.metadata()));
                }
            });
            if (offsets.isEmpty()) {
                continue;
            }
            actions.add(dg.active() ? new SyncAction.GroupSkipped(group) : new SyncAction.CommitGroupOffsets(group, offsets));
        }
    }

    private static void acls(MirrorConfig config, MirrorImage image, SourceView source, DestinationView destination,
                             List<SyncAction> actions) {
        if (source.acls() == null || destination.acls() == null) {
            return;
        }
        Set<String> mirrored = new HashSet<>();
        Set<String> notSynced = new HashSet<>();
        image.topicsOf(config.name()).forEach(t -> (t.desired() == DesiredState.MIRRORING ? mirrored : notSynced).add(t.topic()));
        Map<AclBinding, String> wanted = new TreeMap<>(Comparator.comparing(AclBinding::toString));
        source.acls().forEach(a -> AclRules.whyCopied(config, mirrored, a).ifPresent(why -> wanted.put(a, why)));
        List<SyncAction.Acl> create = new ArrayList<>();
        wanted.forEach((a, why) -> {
            if (!destination.acls().contains(a) && !onTopicOf(notSynced, a)) {
                create.add(new SyncAction.Acl(a, why));
            }
        });
        List<SyncAction.Acl> delete = image.aclsOf(config.name()).stream().map(MirrorAclRecord::binding)
            .filter(a -> !wanted.containsKey(a) && !onTopicOf(notSynced, a))
            .sorted(Comparator.comparing(AclBinding::toString))
            .map(a -> new SyncAction.Acl(a, source.acls().contains(a)
                ? "the mirror no longer selects it (its topics, groups or ACL settings changed)" : "removed at the source"))
            .toList();
        if (!create.isEmpty()) {
            actions.add(new SyncAction.CreateAcls(create));
        }
        if (!delete.isEmpty()) {
            actions.add(new SyncAction.DeleteAcls(delete));
        }
    }

    /** An ACL on one of these topics by name (LITERAL). */
    private static boolean onTopicOf(Set<String> topics, AclBinding acl) {
        return acl.pattern().resourceType() == ResourceType.TOPIC && acl.pattern().patternType() == PatternType.LITERAL
            && topics.contains(acl.pattern().name());
    }
}
