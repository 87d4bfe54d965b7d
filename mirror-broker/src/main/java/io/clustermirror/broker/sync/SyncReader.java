package io.clustermirror.broker.sync;

import io.clustermirror.common.ChunkedListOffsets;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.compat.KafkaClientShapes;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsResult;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.SecurityDisabledException;
import org.apache.kafka.common.errors.UnsupportedVersionException;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * Reads the two views of one sync round through Admin clients. Every part is read on its own: a part that fails
 * is reported to {@code problems} (what, cause) and left null in the view, and the others still count.
 */
final class SyncReader {
    static final long TIMEOUT_MS = 15_000;
    /** The protocol type of consumer groups (Kafka's own constant is in an internal package). */

    private SyncReader() {
    }

    /**
     * @param synced      the mirror's synced topics
     * @param discovering true if auto-discovery needs every source topic name
     */
    static SourceView readSource(Admin source, MirrorConfig config, Collection<String> synced, boolean discovering,
                                 BiConsumer<String, Throwable> problems) {
        Set<String> names = null;
        if (discovering) {
            names = part("list the source topics", problems, () -> get(source.listTopics().names()));
        }
        Map<String, SourceView.Topic> topics = new HashMap<>();
        if (!synced.isEmpty()) {
            Map<String, KafkaFuture<TopicDescription>> descriptions = source.describeTopics(synced).topicNameValues();
            Map<ConfigResource, KafkaFuture<Config>> configs = source.describeConfigs(resources(synced)).values();
            for (String topic : synced) {
                TopicDescription d = part("describe source topic '" + topic + "'", problems, () -> get(descriptions.get(topic)));
                if (d != null) {
                    Map<String, String> explicit = part("read the configs of source topic '" + topic + "'", problems,
                        () -> explicitConfigs(get(configs.get(new ConfigResource(ConfigResource.Type.TOPIC, topic)))));
                    topics.put(topic, new SourceView.Topic(d.topicId().toString(), d.partitions().size(), explicit));
                }
            }
        }
        Map<SyncedGroup, Map<TopicPartition, OffsetAndMetadata>> groupOffsets = null;
        if (!config.patterns(MirrorConfig.GROUPS_INCLUDE).isEmpty() && !synced.isEmpty()) {
            Collection<GroupListing> listed = part("list the source groups", problems,
                () -> get(source.listGroups(new ListGroupsOptions()).all()));
            if (listed != null) {
                groupOffsets = new HashMap<>();
                for (SyncedGroup.Kind kind : SyncedGroup.Kind.values()) {
                    List<String> included = listed.stream().filter(g -> SyncedGroup.kindOf(g).equals(Optional.of(kind))).map(GroupListing::groupId)
                        .filter(g -> SyncPlanner.groupIncluded(config, g)).sorted().toList();
                    groupOffsets.putAll(sourceOffsets(source, kind, included, problems));
                }
            }
        }
        Set<AclBinding> acls = null;
        if (!config.patterns(MirrorConfig.ACL_INCLUDE).isEmpty()) {
            acls = part("read the source ACLs", problems, () -> sourceAcls(source));
        }
        return new SourceView(names, topics, groupOffsets, acls);
    }

    /**
     * Every ACL of the source, or null if the source runs no authorizer: ACL sync is on by default, and such a source
     * has no ACLs to copy, which is not a problem to warn about. Null rather than empty, so that the ACLs the mirror
     * created earlier are left in place rather than taken for removed at the source.
     */
    private static Set<AclBinding> sourceAcls(Admin source) throws Exception {
        try {
            return new HashSet<>(get(source.describeAcls(AclBindingFilter.ANY).values()));
        } catch (SecurityDisabledException e) {
            return null;
        }
    }

    /**
     * @param groups      the groups whose destination side is needed
     * @param aclsNeeded  true if the destination's ACLs are needed
     */
    static DestinationView readDestination(Admin destination, Collection<String> synced, Collection<SyncedGroup> groups, boolean aclsNeeded,
                                           BiConsumer<String, Throwable> problems) {
        Map<String, DestinationView.Topic> topics = new HashMap<>();
        Map<TopicPartition, Long> starts = new HashMap<>();
        Map<TopicPartition, Long> ends = new HashMap<>();
        if (!synced.isEmpty()) {
            Map<String, KafkaFuture<TopicDescription>> descriptions = destination.describeTopics(synced).topicNameValues();
            Map<ConfigResource, KafkaFuture<Config>> configs = destination.describeConfigs(resources(synced)).values();
            for (String topic : synced) {
                TopicDescription d = part("describe destination topic '" + topic + "'", problems, () -> get(descriptions.get(topic)));
                if (d != null) {
                    Map<String, String> explicit = part("read the configs of destination topic '" + topic + "'", problems,
                        () -> explicitConfigs(get(configs.get(new ConfigResource(ConfigResource.Type.TOPIC, topic)))));
                    topics.put(topic, new DestinationView.Topic(d.partitions().size(), explicit));
                }
            }
        }
        Map<SyncedGroup, DestinationView.Group> groupViews = null;
        if (!groups.isEmpty()) {
            Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            topics.forEach((topic, t) -> {
                for (int p = 0; p < t.partitions(); p++) {
                    earliest.put(new TopicPartition(topic, p), OffsetSpec.earliest());
                    latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
                }
            });
            Map<TopicPartition, Long> s = offsets(destination, earliest, problems);
            Map<TopicPartition, Long> e = offsets(destination, latest, problems);
            if (s != null && e != null) {
                starts.putAll(s);
                ends.putAll(e);
                Map<SyncedGroup, DestinationView.Group> read = new HashMap<>();
                for (SyncedGroup.Kind kind : SyncedGroup.Kind.values()) {
                    List<String> ids = groups.stream().filter(g -> g.kind() == kind).map(SyncedGroup::id).toList();
                    // Each kind is read on its own: a destination without share groups still syncs consumer groups.
                    Map<String, DestinationView.Group> ofKind = ids.isEmpty() ? Map.of()
                        : part("read the destination " + kind.label() + "s", problems, () -> groups(destination, kind, ids));
                    if (ofKind != null) {
                        ofKind.forEach((id, g) -> read.put(new SyncedGroup(kind, id), g));
                    }
                }
                groupViews = read;
            }
        }
        Set<AclBinding> acls = null;
        if (aclsNeeded) {
            acls = part("read the destination ACLs", problems,
                () -> new HashSet<>(get(destination.describeAcls(AclBindingFilter.ANY).values())));
        }
        return new DestinationView(topics, starts, ends, groupViews, acls);
    }

    /** The destination side of groups of one kind; a group the destination does not have yet is inactive with no offsets. */
    private static Map<String, DestinationView.Group> groups(Admin destination, SyncedGroup.Kind kind, List<String> ids) throws Exception {
        Map<String, KafkaFuture<Boolean>> described = activity(destination, kind, ids);
        Map<String, DestinationView.Group> out = new HashMap<>();
        List<String> existing = new ArrayList<>();
        for (String g : ids) {
            try {
                out.put(g, new DestinationView.Group(get(described.get(g)), Map.of()));
                existing.add(g);
            } catch (GroupIdNotFoundException e) {
                out.put(g, new DestinationView.Group(false, Map.of()));
            }
        }
        Map<String, KafkaFuture<Map<TopicPartition, OffsetAndMetadata>>> offsets = offsetsOf(destination, kind, existing);
        for (String g : existing) {
            Map<TopicPartition, Long> committed = new HashMap<>();
            get(offsets.get(g)).forEach((tp, om) -> {
                if (om != null) {
                    committed.put(tp, om.offset());
                }
            });
            out.put(g, new DestinationView.Group(out.get(g).active(), committed));
        }
        return out;
    }

    /** Per group: true if it has members, or a state other than EMPTY or DEAD. */
    private static Map<String, KafkaFuture<Boolean>> activity(Admin admin, SyncedGroup.Kind kind, List<String> ids) {
        Map<String, KafkaFuture<Boolean>> out = new HashMap<>();
        switch (kind) {
            case CONSUMER -> admin.describeConsumerGroups(ids).describedGroups()
                .forEach((g, f) -> out.put(g, f.thenApply(d -> isActive(d.groupState(), d.members()))));
            case SHARE -> admin.describeShareGroups(ids).describedGroups()
                .forEach((g, f) -> out.put(g, f.thenApply(d -> isActive(d.groupState(), d.members()))));
        }
        return out;
    }

    private static boolean isActive(GroupState state, Collection<?> members) {
        return !members.isEmpty() || !(state == GroupState.EMPTY || state == GroupState.DEAD);
    }

    /**
     * Per group: its offsets on this cluster, committed offsets of a consumer group or the share-partition start offsets
     * of a share group (no metadata). A partition without an offset maps to null.
     */
    private static Map<String, KafkaFuture<Map<TopicPartition, OffsetAndMetadata>>> offsetsOf(Admin admin, SyncedGroup.Kind kind,
                                                                                             List<String> ids) {
        Map<String, KafkaFuture<Map<TopicPartition, OffsetAndMetadata>>> out = new HashMap<>();
        if (ids.isEmpty()) {
            return out;
        }
        switch (kind) {
            case CONSUMER -> {
                Map<String, ListConsumerGroupOffsetsSpec> specs = new HashMap<>();
                ids.forEach(g -> specs.put(g, new ListConsumerGroupOffsetsSpec()));
                ListConsumerGroupOffsetsResult result = admin.listConsumerGroupOffsets(specs);
                ids.forEach(g -> out.put(g, result.partitionsToOffsetAndMetadata(g)));
            }
            case SHARE -> out.putAll(KafkaClientShapes.shareGroupStartOffsets(admin, ids));
        }
        return out;
    }

    /**
     * The source offsets of the given groups of one kind; a group that cannot be read is reported and left out. A
     * source that refuses the kind's API (a share group listed by a broker whose offsets API this client cannot use)
     * is reported once for the kind, not per group.
     */
    private static Map<SyncedGroup, Map<TopicPartition, OffsetAndMetadata>> sourceOffsets(Admin source, SyncedGroup.Kind kind, List<String> ids,
                                                                                         BiConsumer<String, Throwable> problems) {
        Map<String, KafkaFuture<Map<TopicPartition, OffsetAndMetadata>>> futures = offsetsOf(source, kind, ids);
        Map<SyncedGroup, Map<TopicPartition, OffsetAndMetadata>> out = new HashMap<>();
        boolean[] unsupported = {false};
        BiConsumer<String, Throwable> report = (what, cause) -> {
            unsupported[0] = cause instanceof UnsupportedVersionException;
            problems.accept(unsupported[0] ? "read the source " + kind.label() + "s" : what, cause);
        };
        for (String g : ids) {
            Map<TopicPartition, OffsetAndMetadata> offsets = part("read the offsets of source " + kind.label() + " '" + g + "'", report,
                () -> get(futures.get(g)));
            if (unsupported[0]) {
                break;
            }
            if (offsets != null) {
                Map<TopicPartition, OffsetAndMetadata> m = new HashMap<>();
                offsets.forEach((tp, om) -> {
                    if (om != null) {
                        m.put(tp, om);
                    }
                });
                out.put(new SyncedGroup(kind, g), m);
            }
        }
        return out;
    }

    private static Map<TopicPartition, Long> offsets(Admin admin, Map<TopicPartition, OffsetSpec> specs, BiConsumer<String, Throwable> problems) {
        if (specs.isEmpty()) {
            return Map.of();
        }
        return part("list destination offsets", problems, () -> {
            Map<TopicPartition, Long> out = new HashMap<>();
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> infos = get(ChunkedListOffsets.all(admin, specs, new ListOffsetsOptions()));
            infos.forEach((tp, info) -> out.put(tp, info.offset()));
            return out;
        });
    }

    private static List<ConfigResource> resources(Collection<String> topics) {
        return topics.stream().map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t)).toList();
    }

    /** Configs set on the topic itself (not broker or static defaults); sensitive ones (no value) are left out. */
    private static Map<String, String> explicitConfigs(Config config) {
        Map<String, String> out = new HashMap<>();
        for (ConfigEntry e : config.entries()) {
            if (e.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG && e.value() != null && !e.isSensitive()) {
                out.put(e.name(), e.value());
            }
        }
        return out;
    }

    interface Read<T> {
        T read() throws Exception;
    }

    /** Runs one read; on failure reports it and returns null. */
    static <T> T part(String what, BiConsumer<String, Throwable> problems, Read<T> read) {
        try {
            return read.read();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the task is closing: not a problem to report
            return null;
        } catch (ExecutionException e) {
            problems.accept(what, e.getCause() == null ? e : e.getCause());
            return null;
        } catch (Exception e) {
            problems.accept(what, e);
            return null;
        }
    }

    static <T> T get(KafkaFuture<T> future) throws Exception {
        try {
            return future.get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw e;
        }
    }
}
