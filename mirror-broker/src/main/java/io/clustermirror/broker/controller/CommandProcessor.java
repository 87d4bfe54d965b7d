package io.clustermirror.broker.controller;

import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.DesiredState;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.PartitionState;
import io.clustermirror.common.TopicPatterns;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.CommandResult;
import io.clustermirror.common.records.HeldChange;
import io.clustermirror.common.records.HeldDecision;
import io.clustermirror.common.records.LastCommand;
import io.clustermirror.common.records.MirrorCommand;
import io.clustermirror.common.records.MirrorRecord;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.PartitionStateRecord;
import io.clustermirror.common.records.RecordCodec;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Validates one command against the current image and says what to write, in the style of Kafka's
 * controller managers: nothing here writes to Kafka. The only side effects are the source questions and,
 * for START, creating missing destination topics, which are undone if the command fails after them.
 *
 * <p>Invariants kept: a topic belongs to at most one mirror (a stopped topic may be started again, in the same
 * or another mirror, but only when the command names it: a pattern never selects a topic that is in a mirror); a
 * START never removes records written to a stopped topic since its stop unless the command says to discard them
 * ({@link LocalWrites}); a mirror is deleted only when none of its topics mirrors or pauses; no topic is mirrored
 * back to a cluster that copies it from us; a command that fails changes nothing. Every topic record a command writes
 * names that command ({@link LastCommand}).
 */
final class CommandProcessor {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(CommandProcessor.class);

    private final SourceCluster source;
    private final DestinationCluster destination;
    private final String localClusterId;

    /** @param localClusterId this (destination) cluster's id: failback and loops are recognised by it */
    CommandProcessor(SourceCluster source, DestinationCluster destination, String localClusterId) {
        this.source = source;
        this.destination = destination;
        this.localClusterId = localClusterId;
    }

    /**
     * Never throws: a command it cannot apply (incomplete, or one that hits a bug) gets a failed result, so that one bad
     * record in the command log cannot stop the controller from processing the ones after it.
     */
    CommandOutcome process(MirrorImage image, MirrorCommand command, long nowMs) {
        if (command.op() == null || command.mirror() == null || command.mirror().isBlank()) {
            return CommandOutcome.failed(CommandResult.failed(command.commandId(), MirrorError.INVALID_REQUEST,
                "the command names no " + (command.op() == null ? "operation" : "mirror") + "; use kafka-cluster-mirrors.sh or "
                    + "ClusterMirrorAdmin, which write complete commands"));
        }
        try {
            return switch (command.op()) {
                case CREATE -> create(image, command, nowMs);
                case DELETE -> delete(image, command);
                case START -> start(image, command, nowMs);
                case STOP -> changeDesired(image, command, DesiredState.STOPPED, nowMs);
                case PAUSE -> changeDesired(image, command, DesiredState.PAUSED, nowMs);
                case RESUME -> changeDesired(image, command, DesiredState.MIRRORING, nowMs);
                case ADD_PARTITIONS -> addPartitions(image, command, nowMs);
                case ALTER -> alter(image, command);
                case HOLD_CHANGES -> holdChanges(image, command, nowMs);
                case APPLY_HELD -> decideHeld(image, command, HeldDecision.Verdict.APPLY, nowMs);
                case REJECT_HELD -> decideHeld(image, command, HeldDecision.Verdict.REJECT, nowMs);
                case RECOVER -> recover(image, command, nowMs);
            };
        } catch (ClusterMirrorException e) {
            return CommandOutcome.failed(CommandResult.failed(command.commandId(), e.error(), stripErrorName(e)));
        } catch (RuntimeException e) {
            log.error("Mirror command {} {} '{}' (id {}) failed unexpectedly", command.op(), command.topics(), command.mirror(),
                command.commandId(), e);
            return CommandOutcome.failed(CommandResult.failed(command.commandId(), MirrorError.UNKNOWN_SERVER_ERROR,
                e.getClass().getSimpleName() + " while applying it; nothing was changed (the controller's log has the details)"));
        }
    }

    private CommandOutcome create(MirrorImage image, MirrorCommand command, long nowMs) {
        MirrorConfig config = MirrorConfig.validate(command.mirror(), command.configs());
        if (image.mirror(command.mirror()).isPresent()) {
            throw new ClusterMirrorException(MirrorError.CLUSTER_MIRROR_ALREADY_EXISTS,
                "a mirror named '" + command.mirror() + "' already exists; choose another name or delete it first");
        }
        String sourceClusterId = source.clusterId(config);
        MirrorRecord record = new MirrorRecord(command.mirror(), command.configs(), sourceClusterId, nowMs);
        return new CommandOutcome(
            CommandResult.ok(command.commandId(), "created mirror '" + command.mirror() + "' of source cluster " + sourceClusterId, List.of()),
            List.of(new CommandOutcome.MetadataWrite(RecordCodec.mirrorKey(command.mirror()), RecordCodec.encodeMirror(record))),
            List.of());
    }

    /**
     * ALTER: the mirror's configs changed as the command says ({@link MirrorConfigAlteration}); no topic changes state.
     * A change of the source connection is proven like CREATE's, by asking the source for its cluster id with the new
     * configs: it must still be the mirror's source. The brokers' fetchers and the metadata sync rebuild their source
     * clients when they see the new record.
     */
    private CommandOutcome alter(MirrorImage image, MirrorCommand command) {
        MirrorRecord mirror = requireMirror(image, command.mirror());
        MirrorConfigAlteration alteration = MirrorConfigAlteration.of(mirror, command.configs(), command.deletedConfigs());
        if (alteration.connectionChanged()) {
            String sourceClusterId = source.clusterId(alteration.config());
            if (!sourceClusterId.equals(mirror.sourceClusterId())) {
                throw new ClusterMirrorException(MirrorError.INVALID_CONFIG, "with the new configs, bootstrap.servers reaches "
                    + "cluster " + sourceClusterId + ", not the source of mirror '" + mirror.name() + "' ("
                    + mirror.sourceClusterId() + "); point it at that cluster's brokers, or create another mirror");
            }
        }
        MirrorRecord altered = new MirrorRecord(mirror.name(), alteration.config().originals(), mirror.sourceClusterId(),
            mirror.createdMs());
        String message = "altered mirror '" + mirror.name() + "'"
            + (command.configs().isEmpty() ? "" : "; set " + String.join(", ", new TreeSet<>(command.configs().keySet())))
            + (command.deletedConfigs().isEmpty() ? "" : "; deleted " + String.join(", ", new TreeSet<>(command.deletedConfigs())));
        return new CommandOutcome(CommandResult.ok(command.commandId(), message, List.of()),
            List.of(new CommandOutcome.MetadataWrite(RecordCodec.mirrorKey(mirror.name()), RecordCodec.encodeMirror(altered))),
            List.of());
    }

    private CommandOutcome delete(MirrorImage image, MirrorCommand command) {
        requireMirror(image, command.mirror());
        List<MirrorTopicRecord> topics = image.topicsOf(command.mirror());
        List<String> busy = topics.stream().filter(t -> t.desired() != DesiredState.STOPPED).map(MirrorTopicRecord::topic).toList();
        if (!busy.isEmpty()) {
            throw new ClusterMirrorException(MirrorError.CLUSTER_MIRROR_NOT_EMPTY, "mirror '" + command.mirror() + "' still has "
                + busy.size() + " topic(s) mirroring or paused: " + String.join(", ", busy) + "; stop them first with --stop");
        }
        List<String> stopping = new ArrayList<>();
        List<String> stateKeys = new ArrayList<>();
        for (MirrorTopicRecord t : topics) {
            for (PartitionStateRecord p : image.partitionStatesOf(command.mirror(), t.topic())) {
                stateKeys.addAll(image.stateLogKeysOf(p.key()));
                if (p.state() != PartitionState.STOPPED) {
                    stopping.add(t.topic() + "-" + p.partition());
                }
            }
        }
        if (!stopping.isEmpty()) {
            throw new ClusterMirrorException(MirrorError.CLUSTER_MIRROR_NOT_EMPTY, "mirror '" + command.mirror()
                + "' has partitions that have not finished stopping: " + String.join(", ", stopping) + "; retry when describe shows them STOPPED");
        }
        // The ACLs the mirror created stay on the destination (they are its ACLs now); only the mirror's record of them goes.
        image.aclsOf(command.mirror()).forEach(acl -> stateKeys.add(acl.key()));
        List<CommandOutcome.MetadataWrite> writes = new ArrayList<>();
        writes.add(new CommandOutcome.MetadataWrite(RecordCodec.mirrorKey(command.mirror()), null));
        topics.forEach(t -> writes.add(new CommandOutcome.MetadataWrite(RecordCodec.topicKey(t.topic()), null)));
        return new CommandOutcome(CommandResult.ok(command.commandId(), "deleted mirror '" + command.mirror() + "'",
            topics.stream().map(MirrorTopicRecord::topic).toList()), writes, stateKeys);
    }

    private CommandOutcome start(MirrorImage image, MirrorCommand command, long nowMs) {
        MirrorRecord mirror = requireMirror(image, command.mirror());
        MirrorConfig config = MirrorConfig.validate(mirror.name(), mirror.configs());
        TopicPatterns patterns = requirePatterns(command);
        TopicPatterns excludes = TopicPatterns.of(concat(command.excludes(), csv(config.getString(MirrorConfig.TOPICS_EXCLUDE))));
        command.topics().stream().map(String::trim).filter(InternalTopics::isClusterOwned).findFirst().ifPresent(internal -> {
            throw new ClusterMirrorException(MirrorError.INVALID_REQUEST, "'" + internal + "' is an internal topic of Kafka or a name "
                + "reserved for Cluster Mirror (" + InternalTopics.EXTENSION_PREFIX + "...): it is never mirrored");
        });
        // Other names that start with __ are mirrored when the mirror's topic filters let them, and kept read-only like any.
        Set<String> candidates = source.topicNames(config).stream().filter(t -> !InternalTopics.isClusterOwned(t))
            .collect(Collectors.toSet());
        TreeSet<String> matched = patterns.select(candidates, excludes, MirrorError.UNKNOWN_TOPIC_OR_PARTITION,
            "on the source cluster of mirror '" + mirror.name() + "'");
        // A topic already in a mirror (a stopped one too: it stays in its mirror until that is deleted) starts again only
        // when named: a pattern must not restart a failed-over topic that an operator may be writing to.
        List<String> leftOut = matched.stream().filter(t -> image.topic(t).isPresent() && !patterns.names(t)).toList();
        TreeSet<String> topics = new TreeSet<>(matched);
        leftOut.forEach(topics::remove);
        if (topics.isEmpty()) {
            if (!leftOut.isEmpty()) {
                throw new ClusterMirrorException(MirrorError.TOPIC_ALREADY_IN_CLUSTER_MIRROR, "every topic matched is already in a "
                    + "mirror: " + describeMembership(image, leftOut) + "; a pattern starts only topics in no mirror: name a stopped "
                    + "topic to start it again");
            }
            throw new ClusterMirrorException(MirrorError.UNKNOWN_TOPIC_OR_PARTITION, "every source topic matched was excluded ("
                + String.join(", ", command.excludes()) + "); nothing to start");
        }
        MirrorImage sourceImage = source.mirrorImage(config);
        for (String topic : topics) {
            image.topic(topic).filter(existing -> existing.desired() != DesiredState.STOPPED).ifPresent(existing -> {
                throw new ClusterMirrorException(MirrorError.TOPIC_ALREADY_IN_CLUSTER_MIRROR, "topic '" + topic + "' already belongs to mirror '"
                    + existing.mirror() + "' (" + existing.desired() + "); a topic can be in only one mirror");
            });
            sourceImage.mirrorCopyingFrom(localClusterId, topic).ifPresent(loop -> {
                throw new ClusterMirrorException(MirrorError.MIRROR_LOOP, "the source cluster copies '" + topic
                    + "' from this cluster (its mirror '" + loop + "'); mirroring it back would loop: stop that mirror's topic first");
            });
        }
        Map<String, SourceTopic> sourceTopics = source.describe(config, topics);
        Map<String, DestinationCluster.Topic> existing = destination.describe(topics);
        List<DestinationCluster.NewTopicSpec> toCreate = new ArrayList<>();
        List<String> discarded = new ArrayList<>();
        for (String topic : topics) {
            SourceTopic st = sourceTopics.get(topic);
            if (st == null) {
                throw new ClusterMirrorException(MirrorError.UNKNOWN_TOPIC_OR_PARTITION, "source topic '" + topic + "' disappeared while starting");
            }
            DestinationCluster.Topic dest = existing.get(topic);
            if (dest == null) {
                Map<String, String> configs = new HashMap<>(st.configs());
                configs.keySet().removeIf(config::isTopicConfigExcluded);
                toCreate.add(new DestinationCluster.NewTopicSpec(topic, st.partitions(), configs));
                continue;
            }
            LocalWrites discarding = checkExistingTopic(image, sourceImage, command, topic, st.partitions(), dest);
            if (discarding.records() > 0) {
                discarded.add(topic + " " + discarding.records() + " (" + discarding.ranges() + ")");
            }
        }
        destination.create(toCreate);
        List<String> created = toCreate.stream().map(DestinationCluster.NewTopicSpec::topic).toList();
        String message = "started mirroring " + topics.size() + " topic(s) of mirror '" + mirror.name() + "'"
            + (created.isEmpty() ? "" : "; created " + String.join(", ", created))
            + (discarded.isEmpty() ? "" : "; discarding the records written since the stop: " + String.join(", ", discarded))
            + (leftOut.isEmpty() ? "" : "; left out, already in a mirror: " + describeMembership(image, leftOut));
        LastCommand applied = new LastCommand(command.commandId(), command.op(), nowMs, message);
        List<CommandOutcome.MetadataWrite> writes = topics.stream().map(t -> new CommandOutcome.MetadataWrite(RecordCodec.topicKey(t),
                RecordCodec.encodeTopic(new MirrorTopicRecord(t, mirror.name(), DesiredState.MIRRORING, sourceTopics.get(t).topicId(),
                    sourceTopics.get(t).partitions(), nowMs, applied))))
            .toList();
        return new CommandOutcome(CommandResult.ok(command.commandId(), message, List.copyOf(topics)), writes, List.of());
    }

    /**
     * Checks a destination topic that already exists before START mirrors into it.
     *
     * @return the records written since its stop that starting it discards (none unless it is a stopped topic whose
     *         writes the command discards)
     * @throws ClusterMirrorException if the topic cannot take the source's data, or holds writes the command keeps
     */
    private LocalWrites checkExistingTopic(MirrorImage image, MirrorImage sourceImage, MirrorCommand command, String topic,
                                           int sourcePartitions, DestinationCluster.Topic dest) {
        if (dest.partitions() != sourcePartitions) {
            throw new ClusterMirrorException(MirrorError.INVALID_PARTITIONS, "destination topic '" + topic + "' has " + dest.partitions()
                + " partitions but the source has " + sourcePartitions + "; delete it (start creates it) or give it the same count");
        }
        // A log with data is aligned with the source's before mirroring (PREPARING) when its history is known:
        // it was stopped in one of our mirrors, or the source mirrored it from us (failback).
        Optional<MirrorTopicRecord> stopped = image.topic(topic);
        boolean known = stopped.isPresent() || sourceImage.partitionStateMirroredFrom(localClusterId, topic, 0).isPresent();
        if (dest.holdsData() && !known) {
            throw new ClusterMirrorException(MirrorError.TOPIC_ALREADY_EXISTS, "destination topic '" + topic
                + "' already holds data that did not come from this source; mirroring keeps the source's offsets and "
                + "needs an empty topic: delete it (start creates it)");
        }
        LocalWrites writes = stopped.map(record -> LocalWrites.of(image, sourceImage, localClusterId, record, dest))
            .orElse(LocalWrites.NONE);
        if (writes.records() > 0 && !command.discardLocalWrites()) {
            throw new ClusterMirrorException(MirrorError.MIRROR_TOPIC_HAS_LOCAL_WRITES, "topic '" + topic + "' holds "
                + writes.records() + " record(s) written since it was stopped (" + writes.ranges() + "); starting it "
                + "again would remove them: copy what you need first, then start it with --discard-local-writes "
                + "(MirrorTopicsOptions.discardLocalWrites in the Java API)");
        }
        return writes;
    }

    /** "a (mirror 'dr', STOPPED), b (...)" for topics that are in a mirror. */
    private static String describeMembership(MirrorImage image, List<String> topics) {
        return topics.stream().map(t -> image.topic(t).map(r -> t + " (mirror '" + r.mirror() + "', " + r.desired() + ")").orElse(t))
            .collect(Collectors.joining(", "));
    }

    /** STOP, PAUSE and RESUME: the same selection over the mirror's topics, with the allowed current states per target. */
    private CommandOutcome changeDesired(MirrorImage image, MirrorCommand command, DesiredState target, long nowMs) {
        Map<String, MirrorTopicRecord> own = image.selectTopicsOf(command.mirror(), command.topics(), command.excludes());
        Set<String> topics = own.keySet();
        for (Map.Entry<String, MirrorTopicRecord> e : own.entrySet()) {
            String topic = e.getKey();
            DesiredState current = e.getValue().desired();
            boolean allowed = switch (target) {
                case STOPPED -> current != DesiredState.STOPPED;
                case PAUSED -> current == DesiredState.MIRRORING;
                case MIRRORING -> current == DesiredState.PAUSED;
            };
            if (!allowed) {
                throw notAllowed(topic, current, target);
            }
        }
        String verb = switch (target) {
            case STOPPED -> "stopping";
            case PAUSED -> "paused";
            case MIRRORING -> "resumed";
        };
        String message = verb + " " + topics.size() + " topic(s) of mirror '" + command.mirror() + "'"
            + (command.stopCuts().isEmpty() ? "" : " at a consistent cut");
        LastCommand applied = new LastCommand(command.commandId(), command.op(), nowMs, message);
        List<CommandOutcome.MetadataWrite> writes = topics.stream().map(t -> new CommandOutcome.MetadataWrite(RecordCodec.topicKey(t),
            RecordCodec.encodeTopic(command.stopCuts().isEmpty() ? own.get(t).withDesired(target, applied)
                : own.get(t).stoppedAt(stopCuts(command, own.get(t)), stopGroupOffsets(command, own.get(t)), applied)))).toList();
        return new CommandOutcome(CommandResult.ok(command.commandId(), message, List.copyOf(topics)), writes, List.of());
    }

    /**
     * A consistent stop's cuts of one topic, by partition: -1 where the command names none (a partition added since the
     * client analysed the topic cuts at its last stable offset, like any stop).
     */
    private static List<Long> stopCuts(MirrorCommand command, MirrorTopicRecord topic) {
        Long[] cuts = new Long[topic.partitions()];
        java.util.Arrays.fill(cuts, -1L);
        for (MirrorCommand.PartitionCut cut : command.stopCuts()) {
            if (cut.topic().equals(topic.topic()) && cut.partition() >= 0 && cut.partition() < cuts.length) {
                cuts[cut.partition()] = cut.offset();
            }
        }
        return List.of(cuts);
    }

    /** The offsets a consistent stop gives to groups on one topic's partitions (a partition it no longer has is left out). */
    private static List<MirrorTopicRecord.GroupOffset> stopGroupOffsets(MirrorCommand command, MirrorTopicRecord topic) {
        List<MirrorTopicRecord.GroupOffset> offsets = new java.util.ArrayList<>();
        for (MirrorCommand.PartitionCut cut : command.stopCuts()) {
            if (cut.topic().equals(topic.topic()) && cut.partition() >= 0 && cut.partition() < topic.partitions()) {
                new java.util.TreeMap<>(cut.groupOffsets()).forEach((group, offset) ->
                    offsets.add(new MirrorTopicRecord.GroupOffset(cut.partition(), group, offset)));
            }
        }
        return offsets;
    }

    /**
     * ADD_PARTITIONS (sent by the metadata sync): grows each named mirror topic, still MIRRORING, to its source's
     * partition count and records the count. The new destination partitions start mirroring from offset 0 as
     * soon as they have leaders, like any partition of a MIRRORING topic. A topic whose counts already agree is
     * left as it is; a source with fewer partitions than the destination, or a recreated source topic, is refused.
     */
    private CommandOutcome addPartitions(MirrorImage image, MirrorCommand command, long nowMs) {
        MirrorRecord mirror = requireMirror(image, command.mirror());
        MirrorConfig config = MirrorConfig.validate(mirror.name(), mirror.configs());
        if (command.topics().isEmpty()) {
            throw new ClusterMirrorException(MirrorError.INVALID_REQUEST, "no topics given; name the topics to grow");
        }
        List<MirrorTopicRecord> topics = new ArrayList<>();
        for (String name : new TreeSet<>(command.topics())) {
            MirrorTopicRecord t = image.topic(name).filter(r -> r.mirror().equals(mirror.name())).orElseThrow(() ->
                new ClusterMirrorException(MirrorError.TOPIC_NOT_IN_CLUSTER_MIRROR, "topic '" + name + "' is not in mirror '" + mirror.name() + "'"));
            if (t.desired() != DesiredState.MIRRORING) {
                throw new ClusterMirrorException(MirrorError.MIRROR_TOPIC_NOT_MIRRORING, "topic '" + name + "' is " + t.desired()
                    + ", not MIRRORING; partitions are added only to mirroring topics");
            }
            topics.add(t);
        }
        List<String> names = topics.stream().map(MirrorTopicRecord::topic).toList();
        Map<String, SourceTopic> sourceTopics = source.describe(config, names);
        Map<String, DestinationCluster.Topic> destTopics = destination.describe(names);
        List<CommandOutcome.MetadataWrite> writes = new ArrayList<>();
        List<String> changes = new ArrayList<>();
        for (MirrorTopicRecord t : topics) {
            SourceTopic st = sourceTopics.get(t.topic());
            if (st == null) {
                throw new ClusterMirrorException(MirrorError.UNKNOWN_TOPIC_OR_PARTITION, "source topic '" + t.topic() + "' no longer exists");
            }
            if (t.sourceTopicId() != null && !t.sourceTopicId().equals(st.topicId())) {
                throw new ClusterMirrorException(MirrorError.SOURCE_TOPIC_CHANGED, "source topic '" + t.topic() + "' was recreated (id "
                    + st.topicId() + ", mirrored id " + t.sourceTopicId() + "); its partitions are not added");
            }
            DestinationCluster.Topic dest = destTopics.get(t.topic());
            if (dest == null) {
                throw new ClusterMirrorException(MirrorError.UNKNOWN_TOPIC_OR_PARTITION, "destination topic '" + t.topic() + "' does not exist");
            }
            int destPartitions = dest.partitions();
            if (st.partitions() < destPartitions) {
                throw new ClusterMirrorException(MirrorError.INVALID_PARTITIONS, "source topic '" + t.topic() + "' has " + st.partitions()
                    + " partitions, fewer than the destination's " + destPartitions);
            }
            if (destPartitions < st.partitions()) {
                destination.createPartitions(t.topic(), st.partitions());
            }
            if (destPartitions < st.partitions() || t.partitions() != st.partitions()) {
                String change = Math.min(destPartitions, t.partitions()) + " -> " + st.partitions();
                changes.add(t.topic() + " " + change);
                LastCommand applied = new LastCommand(command.commandId(), command.op(), nowMs, "grew to the source's partition "
                    + "count: " + change);
                writes.add(new CommandOutcome.MetadataWrite(RecordCodec.topicKey(t.topic()),
                    RecordCodec.encodeTopic(t.withPartitions(st.partitions(), applied))));
            }
        }
        String message = changes.isEmpty() ? "partition counts of mirror '" + mirror.name() + "' already match the source"
            : "grew topic(s) of mirror '" + mirror.name() + "' to the source's partition count: " + String.join(", ", changes);
        return new CommandOutcome(CommandResult.ok(command.commandId(), message, topics.stream().map(MirrorTopicRecord::topic).toList()),
            writes, List.of());
    }

    /**
     * HOLD_CHANGES (sent by the metadata sync): the one named topic, still MIRRORING, holds back exactly the command's
     * changes ({@link MirrorTopicRecord#holding}).
     */
    private CommandOutcome holdChanges(MirrorImage image, MirrorCommand command, long nowMs) {
        requireMirror(image, command.mirror());
        if (command.topics().size() != 1) {
            throw new ClusterMirrorException(MirrorError.INVALID_REQUEST, "a HOLD_CHANGES command names exactly one topic, not "
                + command.topics());
        }
        String name = command.topics().get(0);
        MirrorTopicRecord t = image.topic(name).filter(r -> r.mirror().equals(command.mirror())).orElseThrow(() ->
            new ClusterMirrorException(MirrorError.TOPIC_NOT_IN_CLUSTER_MIRROR, "topic '" + name + "' is not in mirror '" + command.mirror() + "'"));
        if (t.desired() != DesiredState.MIRRORING) {
            throw new ClusterMirrorException(MirrorError.MIRROR_TOPIC_NOT_MIRRORING, "topic '" + name + "' is " + t.desired()
                + ", not MIRRORING; only a mirroring topic holds source changes back");
        }
        String message = command.heldChanges().isEmpty() ? "holds no source change back"
            : "holds back the source's " + command.heldChanges().stream().map(HeldChange::toDisplay).collect(Collectors.joining(", "));
        LastCommand applied = new LastCommand(command.commandId(), command.op(), nowMs, message);
        MirrorTopicRecord held = t.holding(command.heldChanges(), applied);
        return new CommandOutcome(CommandResult.ok(command.commandId(), "topic '" + name + "' " + message, List.of(name)),
            List.of(new CommandOutcome.MetadataWrite(RecordCodec.topicKey(name), RecordCodec.encodeTopic(held))), List.of());
    }

    /**
     * APPLY_HELD and REJECT_HELD: the operator's decision on what the selected topics hold back ({@link HeldDecision}),
     * their held topic changes and the source log start moves their partition leaders have seen by now. A topic that holds
     * nothing takes the decision too, so a move its leaders saw but have not recorded yet is covered.
     */
    private CommandOutcome decideHeld(MirrorImage image, MirrorCommand command, HeldDecision.Verdict verdict, long nowMs) {
        requireMirror(image, command.mirror());
        Map<String, MirrorTopicRecord> own = image.selectTopicsOf(command.mirror(), command.topics(), command.excludes());
        List<String> notMirroring = own.values().stream().filter(t -> t.desired() == DesiredState.STOPPED).map(MirrorTopicRecord::topic).toList();
        if (!notMirroring.isEmpty()) {
            throw new ClusterMirrorException(MirrorError.MIRROR_TOPIC_NOT_MIRRORING, "topic(s) " + String.join(", ", notMirroring)
                + " are STOPPED and hold nothing back; leave them out");
        }
        String verb = verdict == HeldDecision.Verdict.APPLY ? "applied" : "rejected";
        List<String> changes = new ArrayList<>();
        own.values().forEach(t -> t.heldChanges().forEach(c -> changes.add(t.topic() + " " + c.toDisplay())));
        String message = verb + " what " + own.size() + " topic(s) of mirror '" + command.mirror() + "' hold back: "
            + (changes.isEmpty() ? "no topic change" : String.join(", ", changes)) + ", and the source log start moves their "
            + "partitions hold (see --describe)";
        LastCommand applied = new LastCommand(command.commandId(), command.op(), nowMs, message);
        List<CommandOutcome.MetadataWrite> writes = own.values().stream().map(t -> new CommandOutcome.MetadataWrite(
            RecordCodec.topicKey(t.topic()), RecordCodec.encodeTopic(t.decided(verdict, applied)))).toList();
        return new CommandOutcome(CommandResult.ok(command.commandId(), message, List.copyOf(own.keySet())), writes, List.of());
    }

    /**
     * RECOVER: the leaders of the selected topics' FAILED partitions try them again now, with a fresh run of automatic
     * retries. Refused when none of their partitions is FAILED as recorded, or when no retry can help any FAILED one (its
     * source topic was deleted or re-created): the error says what to do instead. A partition whose record lags behind its
     * leader is judged by the record; the leader ignores the request for a partition that is not FAILED any more.
     */
    private CommandOutcome recover(MirrorImage image, MirrorCommand command, long nowMs) {
        requireMirror(image, command.mirror());
        Map<String, MirrorTopicRecord> own = image.selectTopicsOf(command.mirror(), command.topics(), command.excludes());
        Map<String, List<PartitionStateRecord>> failed = new TreeMap<>();
        List<String> unrecoverable = new ArrayList<>();
        for (MirrorTopicRecord t : own.values()) {
            for (PartitionStateRecord s : image.partitionStatesOf(command.mirror(), t.topic())) {
                if (s.state() != PartitionState.FAILED) {
                    continue;
                }
                if (s.failureRetries() == null || s.failureRetries().recoverable()) {
                    failed.computeIfAbsent(t.topic(), k -> new ArrayList<>()).add(s);
                } else {
                    unrecoverable.add(t.topic() + "-" + s.partition() + " (" + s.lastError() + ")");
                }
            }
        }
        String cannot = "no retry can help " + String.join(", ", unrecoverable) + ": their source topic is gone or was re-created; "
            + "stop them (--stop) to keep their data as normal topics, then delete them and mirror the source topic anew if needed";
        if (failed.isEmpty()) {
            if (!unrecoverable.isEmpty()) {
                throw new ClusterMirrorException(MirrorError.MIRROR_TOPIC_NOT_RECOVERABLE, cannot);
            }
            throw new ClusterMirrorException(MirrorError.MIRROR_TOPIC_NOT_FAILED, "no partition of the " + own.size() + " selected "
                + "topic(s) of mirror '" + command.mirror() + "' is FAILED, so there is nothing to recover (see --describe)");
        }
        int partitions = failed.values().stream().mapToInt(List::size).sum();
        String message = "recovering " + partitions + " FAILED partition(s) of " + failed.size() + " topic(s) of mirror '"
            + command.mirror() + "': their leaders try them again now" + (unrecoverable.isEmpty() ? "" : "; " + cannot);
        LastCommand applied = new LastCommand(command.commandId(), command.op(), nowMs, message);
        List<CommandOutcome.MetadataWrite> writes = failed.keySet().stream().map(t -> new CommandOutcome.MetadataWrite(
            RecordCodec.topicKey(t), RecordCodec.encodeTopic(own.get(t).recovered(applied)))).toList();
        return new CommandOutcome(CommandResult.ok(command.commandId(), message, List.copyOf(failed.keySet())), writes, List.of());
    }

    private static ClusterMirrorException notAllowed(String topic, DesiredState current, DesiredState target) {
        return switch (target) {
            case MIRRORING -> new ClusterMirrorException(MirrorError.MIRROR_TOPIC_NOT_PAUSED,
                "topic '" + topic + "' is " + current + ", not PAUSED; only a paused topic can be resumed");
            case PAUSED -> new ClusterMirrorException(MirrorError.MIRROR_TOPIC_NOT_MIRRORING,
                "topic '" + topic + "' is " + current + ", not MIRRORING; only a mirroring topic can be paused");
            case STOPPED -> new ClusterMirrorException(MirrorError.MIRROR_TOPIC_NOT_MIRRORING,
                "topic '" + topic + "' is already STOPPED");
        };
    }

    private static MirrorRecord requireMirror(MirrorImage image, String name) {
        return image.mirror(name).orElseThrow(() ->
            new ClusterMirrorException(MirrorError.UNKNOWN_CLUSTER_MIRROR, "no mirror named '" + name + "'"));
    }

    private static TopicPatterns requirePatterns(MirrorCommand command) {
        return TopicPatterns.required(command.topics());
    }

    private static List<String> csv(String value) {
        return value == null || value.isBlank() ? List.of()
            : Arrays.stream(value.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    /** The result record carries the error separately; its message is the explanation alone. */
    private static String stripErrorName(ClusterMirrorException e) {
        String prefix = e.error().name() + ": ";
        String m = e.getMessage();
        return m.startsWith(prefix) ? m.substring(prefix.length()) : m;
    }
}
