package io.clustermirror.broker.sync;

import io.clustermirror.broker.auth.InternalOperations;
import io.clustermirror.broker.auth.InternalOperations.Operation;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.MirrorConfig;
import io.clustermirror.common.compat.KafkaClientShapes;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.CommandOp;
import io.clustermirror.common.records.CommandResult;
import io.clustermirror.common.records.HeldChange;
import io.clustermirror.common.records.MirrorAclRecord;
import io.clustermirror.common.records.MirrorTopicRecord;
import io.clustermirror.common.records.RecordCodec;
import io.clustermirror.common.records.SyncedTopicConfigsRecord;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * Performs the {@link SyncAction}s of one mirror: the only place of the sync that changes anything. Changes to
 * the destination's own topics and group offsets are internal operations ({@link InternalOperations}): the
 * admin's client id must come from {@link InternalOperations#newClientId}; ACL changes are not
 * (see {@link #createAcls}). Topic membership and partition counts change only
 * through the MirrorController (commands). Each action fails on its own; a failure is logged (once while it
 * repeats) and the next round retries.
 *
 * <p>The actions run one after the other on the mirror's {@link SyncScheduler}. An action that must wait (for the
 * controller's answer, for this broker's image to show what the controller did, for the controller's config policy to
 * read a declaration) schedules its next check instead of sleeping; the next action starts once it is done.
 *
 * <p>Logs name the mirror, the topic or group and what changed, never config values.
 */
final class SyncExecutor {
    private static final Logger log = LoggerFactory.getLogger(SyncExecutor.class);
    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);
    static final long COMMAND_TIMEOUT_MS = 30_000;
    /** How long an action waits for the image to show a change, or for the config policy to let declared configs through. */
    static final long IMAGE_WAIT_MS = 15_000;
    /** How often the image is checked for a change the controller made. */
    static final long IMAGE_CHECK_MS = 50;
    /** How soon a config change the policy refused is tried again. */
    static final long POLICY_RETRY_MS = 200;

    private final String mirror;
    private final Admin destination;
    private final String destinationClientId;
    private final Producer<byte[], byte[]> stateProducer;
    private final MirrorCommands commands;
    private final Supplier<MirrorImage> image;
    private final ProblemLog problems;
    private final SyncScheduler scheduler;

    SyncExecutor(String mirror, Admin destination, String destinationClientId, Producer<byte[], byte[]> stateProducer,
                 MirrorCommands commands, Supplier<MirrorImage> image, ProblemLog problems, SyncScheduler scheduler) {
        this.mirror = mirror;
        this.destination = destination;
        this.destinationClientId = destinationClientId;
        this.stateProducer = stateProducer;
        this.commands = commands;
        this.image = image;
        this.problems = problems;
        this.scheduler = scheduler;
    }

    /**
     * Performs the actions in order, each once the one before it is done, its waits included; an action that fails is
     * reported and the next one runs. The result completes, never exceptionally, once the last action is done. Once the
     * scheduler is shut down the actions left are skipped.
     */
    CompletableFuture<Void> execute(List<SyncAction> actions) {
        return inOrder(actions, this::perform);
    }

    private CompletableFuture<Void> perform(SyncAction action) {
        if (scheduler.isShutDown()) {
            return DONE; // the task is closing
        }
        String what = describe(action);
        return started(() -> run(action)).handle((ignored, failure) -> {
            Throwable cause = failure instanceof CompletionException ? failure.getCause() : failure;
            if (cause == null) {
                problems.resolved(what);
            } else if (cause instanceof InterruptedException) {
                Thread.currentThread().interrupt(); // the task is closing: nothing went wrong with the action
            } else {
                problems.report(what, cause);
            }
            return null;
        });
    }

    private CompletableFuture<Void> run(SyncAction action) throws Exception {
        if (action instanceof SyncAction.StartTopics a) {
            return inOrder(a.topics(), this::startTopic);
        } else if (action instanceof SyncAction.AddPartitions a) {
            return addPartitions(a);
        } else if (action instanceof SyncAction.AlterTopicConfigs a) {
            return alterConfigs(a);
        } else if (action instanceof SyncAction.HoldChanges a) {
            return holdChanges(a);
        } else if (action instanceof SyncAction.CommitGroupOffsets a) {
            commitOffsets(a);
        } else if (action instanceof SyncAction.GroupSkipped a) {
            problems.note("group:" + a.group(), "Mirror '" + mirror + "': " + a.group()
                + " has active members on the destination; its offsets are not overwritten while it has");
        } else if (action instanceof SyncAction.CreateAcls a) {
            createAcls(a);
        } else if (action instanceof SyncAction.DeleteAcls a) {
            deleteAcls(a);
        }
        return DONE;
    }

    /** One START per topic, so that a topic that cannot start does not hold back the others. */
    private CompletableFuture<Void> startTopic(String topic) {
        return commands.send(CommandOp.START, mirror, List.of(Pattern.quote(topic)), List.of(), COMMAND_TIMEOUT_MS).thenCompose(result -> {
            if (!result.succeeded()) {
                problems.reportMessage(startKey(topic), "Mirror '" + mirror + "': could not start mirroring auto-discovered source topic '"
                    + topic + "': " + result.error().format(result.message()) + "; retrying at every sync");
                return DONE;
            }
            problems.resolved(startKey(topic));
            log.info("Mirror '{}': source topic '{}' matches mirror.topics.include; mirroring started ({})", mirror, topic, result.message());
            return awaitImage(() -> image.get().topic(topic).isPresent());
        });
    }

    private static String startKey(String topic) {
        return "start mirroring auto-discovered topic '" + topic + "'";
    }

    private CompletableFuture<Void> addPartitions(SyncAction.AddPartitions action) {
        return commands.send(CommandOp.ADD_PARTITIONS, mirror, List.of(action.topic()), List.of(), COMMAND_TIMEOUT_MS).thenCompose(result -> {
            requireSucceeded(result);
            log.info("Mirror '{}' topic '{}': the source has {} partitions; {}", mirror, action.topic(), action.sourcePartitions(), result.message());
            return awaitImage(() -> image.get().topic(action.topic()).map(t -> t.partitions() >= action.sourcePartitions()).orElse(true));
        });
    }

    private static void requireSucceeded(CommandResult result) {
        if (!result.succeeded()) {
            throw new IllegalStateException(result.error().format(result.message()));
        }
    }

    /** Records what the topic holds back now; a change held for the first time is logged with what to do about it. */
    private CompletableFuture<Void> holdChanges(SyncAction.HoldChanges action) {
        List<HeldChange> before = image.get().topic(action.topic()).map(MirrorTopicRecord::heldChanges).orElse(List.of());
        return commands.send(CommandOp.HOLD_CHANGES, mirror, List.of(action.topic()), action.changes(), COMMAND_TIMEOUT_MS)
            .thenCompose(result -> {
                requireSucceeded(result);
                logNewlyHeld(action, before);
                return awaitImage(() -> image.get().topic(action.topic()).map(t -> t.heldChanges().size() == action.changes().size()
                    && action.changes().stream().allMatch(c -> t.heldChanges().stream().anyMatch(c::sameChange))).orElse(true));
            });
    }

    private void logNewlyHeld(SyncAction.HoldChanges action, List<HeldChange> before) {
        List<String> added = action.changes().stream().filter(c -> before.stream().noneMatch(c::sameChange)).map(HeldChange::toDisplay).toList();
        if (!added.isEmpty()) {
            log.warn("Mirror '{}' topic '{}': holding back the source's {} ({}={}): the destination keeps its data and "
                + "configs until the hold ({}) has passed; apply now with kafka-cluster-mirrors.sh --apply-held, or keep the "
                + "destination as it is with --reject-held", mirror, action.topic(), String.join(", ", added),
                MirrorConfig.SOURCE_DESTRUCTIVE_POLICY, "hold", MirrorConfig.SOURCE_DESTRUCTIVE_HOLD_MS);
        }
    }

    /**
     * Declares the topic's copied configs ({@link SyncedTopicConfigsRecord}, in {@code __mirror_metadata}), then changes
     * them. The controller's config policy lets only declared values through, and it reads the declaration through its
     * own view, a moment behind: a refusal is retried every {@link #POLICY_RETRY_MS} for {@link #IMAGE_WAIT_MS}, then
     * left to the next round.
     */
    private CompletableFuture<Void> alterConfigs(SyncAction.AlterTopicConfigs action) throws Exception {
        boolean declared = image.get().syncedTopicConfigs(action.topic())
            .filter(d -> d.mirror().equals(mirror) && d.configs().equals(action.synced())).isPresent();
        if (!declared) {
            SyncedTopicConfigsRecord record = new SyncedTopicConfigsRecord(mirror, action.topic(), action.synced(),
                scheduler.time().milliseconds());
            stateProducer.send(new ProducerRecord<>(InternalTopics.METADATA, 0, RecordCodec.encodeKey(SyncedTopicConfigsRecord.key(action.topic())),
                RecordCodec.encodeSyncedTopicConfigs(record))).get(SyncReader.TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }
        if (action.set().isEmpty() && action.delete().isEmpty()) {
            return DONE;
        }
        List<AlterConfigOp> ops = new ArrayList<>();
        action.set().forEach((k, v) -> ops.add(new AlterConfigOp(new ConfigEntry(k, v), AlterConfigOp.OpType.SET)));
        action.delete().forEach(k -> ops.add(new AlterConfigOp(new ConfigEntry(k, null), AlterConfigOp.OpType.DELETE)));
        PolicyViolationException[] lastRefusal = {null};
        return scheduler.retry(() -> {
            try (InternalOperations.Scope ignored = InternalOperations.begin(destinationClientId,
                    List.of(Operation.topic(action.topic(), AclOperation.ALTER_CONFIGS)))) {
                SyncReader.get(destination.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, action.topic()), ops)).all());
                return Optional.of(Boolean.TRUE);
            } catch (PolicyViolationException e) {
                lastRefusal[0] = e; // the controller's view has not read the declaration yet
                return Optional.<Boolean>empty();
            }
        }, POLICY_RETRY_MS, IMAGE_WAIT_MS).thenAccept(altered -> {
            if (altered.isEmpty()) {
                throw lastRefusal[0];
            }
            log.info("Mirror '{}' topic '{}': topic configs synced from the source: set {}, removed {}", mirror, action.topic(),
                new TreeSet<>(action.set().keySet()), new TreeSet<>(action.delete()));
        });
    }

    private void commitOffsets(SyncAction.CommitGroupOffsets planned) throws Exception {
        // A topic stopped since the round began belongs to the destination now: its offsets are no longer copied.
        Set<String> mirroring = new HashSet<>();
        SyncPlanner.syncedTopics(image.get(), mirror).forEach(t -> mirroring.add(t.topic()));
        Map<TopicPartition, OffsetAndMetadata> stillMirrored = new HashMap<>(planned.offsets());
        stillMirrored.keySet().removeIf(tp -> !mirroring.contains(tp.topic()));
        if (stillMirrored.isEmpty()) {
            return;
        }
        SyncAction.CommitGroupOffsets action = new SyncAction.CommitGroupOffsets(planned.group(), stillMirrored);
        List<Operation> ops = new ArrayList<>();
        ops.add(Operation.group(action.group().id(), AclOperation.READ));
        Set<String> topics = new TreeSet<>();
        action.offsets().keySet().forEach(tp -> topics.add(tp.topic()));
        topics.forEach(t -> ops.add(Operation.topic(t, AclOperation.READ)));
        // AlterShareGroupOffsets is authorized like OffsetCommit: READ on the group and on each topic.
        try (InternalOperations.Scope ignored = InternalOperations.begin(destinationClientId, ops)) {
            // The coordinator refuses an admin commit to a group with members, so a consumer that joined since the
            // destination was read is not overwritten either.
            String id = action.group().id();
            switch (action.group().kind()) {
                case CONSUMER -> SyncReader.get(destination.alterConsumerGroupOffsets(id, action.offsets()).all());
                case SHARE -> {
                    Map<TopicPartition, Long> starts = new HashMap<>();
                    action.offsets().forEach((tp, om) -> starts.put(tp, om.offset()));
                    SyncReader.get(KafkaClientShapes.alterShareGroupStartOffsets(destination, id, starts));
                }
            }
        }
        problems.note("group:" + action.group(), "Mirror '" + mirror + "': copying the offsets of " + action.group()
            + " to the destination (topics " + topics + ")");
        if (log.isDebugEnabled()) {
            Map<TopicPartition, Long> offsets = new TreeMap<>(Comparator.comparing(TopicPartition::toString));
            action.offsets().forEach((tp, om) -> offsets.put(tp, om.offset()));
            log.debug("Mirror '{}': {} offsets set to {}", mirror, action.group(), offsets);
        }
    }

    /**
     * Records the ACLs as the mirror's before creating them, so that a crash in between cannot leave one unowned.
     *
     * <p>Unlike the sync's other writes, ACL changes are no internal operation ({@link InternalOperations}): Kafka
     * authorizes CreateAcls and DeleteAcls by one check, ALTER on the CLUSTER, whatever the bindings, so an in-flight
     * registration could not be narrowed to the ACLs the planner selected; it would let the call's client, for its
     * duration, do anything else that right allows. So the destination authorizes these requests as any client's: the
     * principal of the sync's destination client ({@code cluster.mirror.local.*}) needs ALTER on the cluster there (a
     * super user has it, as a destination with ACLs requires of that principal anyway), and where the destination's
     * ACLs refuse it, the sync creates and deletes no ACL and says so at every round that tries.
     */
    private void createAcls(SyncAction.CreateAcls action) throws Exception {
        long now = scheduler.time().milliseconds();
        for (SyncAction.Acl acl : action.acls()) {
            MirrorAclRecord record = MirrorAclRecord.of(mirror, acl.binding(), now);
            stateProducer.send(new ProducerRecord<>(InternalTopics.STATE, RecordCodec.encodeKey(record.key()), RecordCodec.encodeAcl(record)))
                .get(SyncReader.TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }
        withDestinationAclRights(() -> destination.createAcls(bindings(action.acls())).all());
        action.acls().forEach(acl -> log.info("Mirror '{}': created ACL {} on the destination as at the source ({})",
            mirror, acl.binding(), acl.why()));
    }

    /** Deletes exactly the given ACLs, then forgets them. */
    private void deleteAcls(SyncAction.DeleteAcls action) throws Exception {
        withDestinationAclRights(() -> destination.deleteAcls(bindings(action.acls()).stream().map(AclBinding::toFilter).toList()).all());
        for (SyncAction.Acl acl : action.acls()) {
            stateProducer.send(new ProducerRecord<>(InternalTopics.STATE, RecordCodec.encodeKey(MirrorAclRecord.key(mirror, acl.binding())), null))
                .get(SyncReader.TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }
        action.acls().forEach(acl -> log.info("Mirror '{}': deleted ACL {} it had created on the destination ({})",
            mirror, acl.binding(), acl.why()));
    }

    private static List<AclBinding> bindings(List<SyncAction.Acl> acls) {
        return acls.stream().map(SyncAction.Acl::binding).toList();
    }

    /** Runs an ACL change; a refusal by the destination's ACLs names the right the sync's principal lacks. */
    private static void withDestinationAclRights(Supplier<KafkaFuture<?>> change) throws Exception {
        try {
            SyncReader.get(change.get());
        } catch (ClusterAuthorizationException e) {
            throw new ClusterAuthorizationException("the destination's ACLs refuse it to the principal of the cluster.mirror.local.* "
                + "clients: grant that principal ALTER on the cluster (or make it a super user) for the sync to copy ACLs; the sync "
                + "does not bypass the destination's ACLs", e);
        }
    }

    /**
     * Completes once this broker's image shows a change the controller made, so that the next round does not repeat it,
     * or after {@link #IMAGE_WAIT_MS} without it (the next round then sees where things stand).
     */
    private CompletableFuture<Void> awaitImage(BooleanSupplier shown) {
        return scheduler.retry(() -> shown.getAsBoolean() ? Optional.of(Boolean.TRUE) : Optional.<Boolean>empty(), IMAGE_CHECK_MS, IMAGE_WAIT_MS)
            .thenApply(inTime -> null);
    }

    /** Runs {@code step} for each item, each once the one before it is done; fails, skipping the rest, when one fails. */
    private static <T> CompletableFuture<Void> inOrder(List<T> items, Function<T, CompletableFuture<Void>> step) {
        CompletableFuture<Void> done = DONE;
        for (T item : items) {
            done = done.thenCompose(previous -> step.apply(item));
        }
        return done;
    }

    /** The step's result, or a failed one if it throws before it returns one. */
    private static CompletableFuture<Void> started(Callable<CompletableFuture<Void>> step) {
        try {
            return step.call();
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static String describe(SyncAction action) {
        if (action instanceof SyncAction.StartTopics) {
            return "start auto-discovered topics";
        } else if (action instanceof SyncAction.AddPartitions a) {
            return "add partitions to topic '" + a.topic() + "'";
        } else if (action instanceof SyncAction.AlterTopicConfigs a) {
            return "sync the configs of topic '" + a.topic() + "'";
        } else if (action instanceof SyncAction.HoldChanges a) {
            return "record the held changes of topic '" + a.topic() + "'";
        } else if (action instanceof SyncAction.CommitGroupOffsets a) {
            return "copy the offsets of " + a.group();
        } else if (action instanceof SyncAction.CreateAcls) {
            return "create ACLs";
        } else if (action instanceof SyncAction.DeleteAcls) {
            return "delete ACLs";
        }
        return action.getClass().getSimpleName();
    }
}
