package io.clustermirror.broker.partition;

import io.clustermirror.broker.node.LocalClients;
import io.clustermirror.broker.auth.InternalOperations;
import io.clustermirror.broker.auth.InternalOperations.Operation;
import io.clustermirror.broker.sync.SyncedGroup;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsResult;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Moves the consumer groups' committed offsets of a partition that lie past a truncation by the mirror back to the
 * truncation offset, on the broker's own cluster; and gives groups the offsets a consistent stop chose for them.
 *
 * <p>Why: a truncation (the stop's cut to the last stable offset, the alignment's cut where this log and the source's
 * diverge, as when a topic fails back with {@code --discard-local-writes}) removes records that a group may have read
 * and committed past. Such an offset then points at records the group never read: the mirrored ones that replace the
 * cut, or the writes after the stop's barrier. A consumer resuming there would skip them, or, past the log end, be reset
 * by its {@code auto.offset.reset}. Back at the truncation offset it reads them: at least once, never a skip, as
 * Kafka's consumers do after a log truncation of their own (KIP-320). The metadata sync, which copies the source's
 * offsets every round, would mend a mirroring topic only at its next round, and a stop may come first.
 *
 * <p>A group with members is refused by its coordinator (its consumers own their offsets); it is named in a warning
 * with the command that moves it. Groups the local client may not describe are not seen.
 */
final class GroupOffsetRewinder implements PartitionRuntime.CommittedOffsets {
    private static final Logger log = LoggerFactory.getLogger(GroupOffsetRewinder.class);
    /** The bound of each call: a stop waits for the rewind, and must not wait long for a slow coordinator. */
    private static final int TIMEOUT_MS = 10_000;

    private final LocalClients clients;
    private final int nodeId;

    GroupOffsetRewinder(LocalClients clients, int nodeId) {
        this.clients = clients;
        this.nodeId = nodeId;
    }

    @Override
    public void rewind(String mirror, TopicPartition tp, long offset) {
        String clientId = InternalOperations.newClientId("cluster-mirror-" + nodeId + "-rewind");
        try (Admin admin = clients.admin(clientId)) {
            Map<String, OffsetAndMetadata> past = committedPast(admin, tp, offset);
            past.forEach((group, committed) -> move(admin, clientId, mirror, tp, group, committed, offset));
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            Throwable reason = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e; // a timeout has no message
            log.error("Mirror '{}' partition {}: could not read the consumer groups' committed offsets after truncating it to "
                + "offset {} ({}). A group that committed past it would skip records: check with kafka-consumer-groups "
                + "--describe --all-groups and move such a group with --reset-offsets --to-offset {} --topic {}:{}",
                mirror, tp, offset, reason, offset, tp.topic(), tp.partition());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Gives each group its offset of {@code tp}: the offset of the last transaction a consistent stop kept, for a group
     * that commits inside transactions. The offset may lie below or above the one the metadata sync copied (a transaction
     * the sync saw may be cut; one it had not seen yet may be kept).
     */
    @Override
    public void set(String mirror, TopicPartition tp, Map<String, Long> offsets) {
        String clientId = InternalOperations.newClientId("cluster-mirror-" + nodeId + "-stop-offsets");
        try (Admin admin = clients.admin(clientId)) {
            new java.util.TreeMap<>(offsets).forEach((group, offset) -> {
                String failure = commit(admin, clientId, tp, group, offset, Optional.empty());
                if (failure == null) {
                    log.info("Mirror '{}' partition {}: gave group '{}' offset {}, where the last transaction the consistent stop kept "
                        + "committed it (its input from there on is what the stop removed the output of)", mirror, tp, group, offset);
                } else {
                    log.warn("Mirror '{}' partition {}: could not give group '{}' offset {}, the offset of the last transaction the "
                        + "consistent stop kept ({}). If it has members, stop them first. Before the application resumes, run "
                        + "kafka-consumer-groups --reset-offsets --group {} --topic {}:{} --to-offset {} --execute", mirror, tp, group, offset,
                        failure, group, tp.topic(), tp.partition(), offset);
                }
            });
        }
    }

    /** The committed offsets of {@code tp} past {@code offset}, by consumer group. */
    private static Map<String, OffsetAndMetadata> committedPast(Admin admin, TopicPartition tp, long offset)
            throws ExecutionException, InterruptedException, TimeoutException {
        // The consumer groups, as the metadata sync tells them (ListGroupsOptions.forConsumerGroups came in Kafka 4.1).
        Collection<GroupListing> groups = admin.listGroups(new ListGroupsOptions()
                .withTypes(Set.of(GroupType.CLASSIC, GroupType.CONSUMER)).timeoutMs(TIMEOUT_MS))
            .all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS).stream()
            .filter(g -> SyncedGroup.kindOf(g).equals(Optional.of(SyncedGroup.Kind.CONSUMER))).toList();
        Map<String, OffsetAndMetadata> past = new HashMap<>();
        if (groups.isEmpty()) {
            return past;
        }
        Map<String, ListConsumerGroupOffsetsSpec> specs = new HashMap<>();
        groups.forEach(g -> specs.put(g.groupId(), new ListConsumerGroupOffsetsSpec().topicPartitions(List.of(tp))));
        ListConsumerGroupOffsetsResult result = admin.listConsumerGroupOffsets(specs,
            new ListConsumerGroupOffsetsOptions().timeoutMs(TIMEOUT_MS));
        for (String group : specs.keySet()) {
            OffsetAndMetadata committed = result.partitionsToOffsetAndMetadata(group).get(TIMEOUT_MS, TimeUnit.MILLISECONDS).get(tp);
            if (committed != null && committed.offset() > offset) {
                past.put(group, committed);
            }
        }
        return past;
    }

    private static void move(Admin admin, String clientId, String mirror, TopicPartition tp, String group, OffsetAndMetadata committed,
                             long offset) {
        String failure = commit(admin, clientId, tp, group, offset, Optional.ofNullable(committed.metadata()));
        if (failure == null) {
            log.info("Mirror '{}' partition {}: moved the committed offset of group '{}' from {} back to {}, where the log was "
                + "truncated (its records from there on are ones the group has not read)", mirror, tp, group, committed.offset(), offset);
        } else {
            log.warn("Mirror '{}' partition {}: group '{}' committed offset {}, past the truncation at offset {}, and could not be "
                + "moved back ({}): if it has members, they skip the records from {} to {}. Stop them and run "
                + "kafka-consumer-groups --reset-offsets --group {} --topic {}:{} --to-offset {} --execute", mirror, tp, group,
                committed.offset(), offset, failure, offset, committed.offset(), group, tp.topic(), tp.partition(), offset);
        }
    }

    /**
     * Commits {@code offset} of {@code tp} for {@code group}, authorized like the metadata sync's commits: READ on the group
     * and the topic, a mirror topic included.
     *
     * @return null once committed; else why not (the coordinator refused it, as for a group with members, or did not answer
     *         in time), for the caller's one warning
     */
    private static String commit(Admin admin, String clientId, TopicPartition tp, String group, long offset, Optional<String> metadata) {
        List<Operation> ops = List.of(Operation.group(group, AclOperation.READ), Operation.topic(tp.topic(), AclOperation.READ));
        try (InternalOperations.Scope ignored = InternalOperations.begin(clientId, ops)) {
            admin.alterConsumerGroupOffsets(group, Map.of(tp, new OffsetAndMetadata(offset, Optional.empty(), metadata.orElse(""))),
                new AlterConsumerGroupOffsetsOptions().timeoutMs(TIMEOUT_MS)).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause() != null ? e.getCause().getMessage() : e.getMessage();
        } catch (TimeoutException e) {
            return "no answer within " + TIMEOUT_MS + " ms"; // a timeout has no message
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }
}
