package io.clustermirror.broker.sync;

import io.clustermirror.common.DesiredState;
import io.clustermirror.common.MirrorError;
import io.clustermirror.common.image.MirrorImage;
import io.clustermirror.common.records.CommandOp;
import io.clustermirror.common.records.CommandResult;
import io.clustermirror.common.records.HeldChange;
import io.clustermirror.common.records.MirrorTopicRecord;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.AlterConfigsOptions;
import org.apache.kafka.clients.admin.AlterConfigsResult;
import org.apache.kafka.clients.admin.MockAdminClient;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.LongStream;

import static io.clustermirror.broker.sync.SyncExecutor.IMAGE_CHECK_MS;
import static io.clustermirror.broker.sync.SyncExecutor.IMAGE_WAIT_MS;
import static io.clustermirror.broker.sync.SyncExecutor.POLICY_RETRY_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The waits of {@link SyncExecutor}, on a mock clock: an action that waits (for the image to show what the controller did,
 * for the config policy to read a declaration) holds back the next action, checks again at its interval and gives up at
 * its bound; a failed action is reported and the round goes on; a scheduler shut down runs nothing more.
 */
class SyncWaitsTest {
    private static final Node BROKER = new Node(0, "localhost", 9092);
    private static final MirrorImage EMPTY = new MirrorImage(Map.of(), Map.of(), Map.of());

    private final MockTime time = new MockTime(0, 1_700_000_000_000L, 0);
    private final long startMs = time.milliseconds();
    private final SteppedRunner steps = new SteppedRunner(time);
    private final SyncScheduler scheduler = new SyncScheduler(steps, time);
    private final AtomicReference<MirrorImage> image = new AtomicReference<>(EMPTY);
    private final ProblemLog problems = new ProblemLog("dr");
    private final RecordingCommands commands = new RecordingCommands();
    private final RefusingAdmin destination = new RefusingAdmin();

    @Test
    void aStartedTopicHoldsBackTheNextActionUntilTheImageShowsIt() {
        CompletableFuture<Void> round = execute(new SyncAction.StartTopics(List.of("orders")), new SyncAction.AddPartitions("payments", 6));
        assertEquals(List.of("START @0"), commands.sent);

        steps.advance(3 * IMAGE_CHECK_MS);
        assertEquals(List.of("START @0"), commands.sent, "the image does not show the topic yet");

        image.set(imageWith("orders"));
        steps.advance(IMAGE_CHECK_MS);
        assertEquals(List.of("START @0", "ADD_PARTITIONS @" + 4 * IMAGE_CHECK_MS), commands.sent, "started at the next check of the image");
        assertTrue(round.isDone());
        assertEquals(Map.of(), problems.current());
    }

    @Test
    void anImageThatNeverShowsTheChangeHoldsTheRoundBackForItsBoundOnly() {
        CompletableFuture<Void> round = execute(new SyncAction.StartTopics(List.of("orders")), new SyncAction.AddPartitions("payments", 6));

        steps.advance(IMAGE_WAIT_MS - 1);
        assertEquals(List.of("START @0"), commands.sent);
        assertFalse(round.isDone());

        steps.advance(1);
        assertEquals(List.of("START @0", "ADD_PARTITIONS @" + IMAGE_WAIT_MS), commands.sent);
        assertTrue(round.isDone());
        assertEquals(Map.of(), problems.current(), "the next round sees where things stand: no problem to report");
    }

    @Test
    void aConfigChangeThePolicyRefusesIsTriedAgainUntilTheDeclarationIsRead() {
        destination.refusals = 3;

        CompletableFuture<Void> round = execute(alterRetention());
        steps.advance(10 * POLICY_RETRY_MS);

        assertEquals(List.of(0L, POLICY_RETRY_MS, 2 * POLICY_RETRY_MS, 3 * POLICY_RETRY_MS), destination.attemptsAt);
        assertTrue(round.isDone());
        assertEquals(Map.of(), problems.current());
    }

    @Test
    void aConfigChangeStillRefusedAtTheBoundIsReportedAndTheRoundGoesOn() {
        destination.refusals = Integer.MAX_VALUE;

        CompletableFuture<Void> round = execute(alterRetention(), new SyncAction.AddPartitions("payments", 6));
        steps.advance(IMAGE_WAIT_MS - 1);
        assertFalse(round.isDone());
        assertEquals(List.of(), commands.sent);

        steps.advance(1);
        assertEquals(LongStream.rangeClosed(0, IMAGE_WAIT_MS / POLICY_RETRY_MS).map(n -> n * POLICY_RETRY_MS).boxed().toList(),
            destination.attemptsAt);
        assertEquals(List.of("ADD_PARTITIONS @" + IMAGE_WAIT_MS), commands.sent);
        assertTrue(round.isDone());
        assertTrue(problems.current().get("sync the configs of topic 'orders'").contains("PolicyViolationException"),
            () -> problems.current().toString());
    }

    @Test
    void aFailedActionIsReportedTheRestOfTheRoundRunsAndTheNextRoundClearsIt() {
        commands.answers.put(CommandOp.ADD_PARTITIONS, CompletableFuture.completedFuture(
            CommandResult.failed("id", MirrorError.MIRROR_CONTROLLER_UNAVAILABLE, "the controller is moving")));
        commands.answers.put(CommandOp.HOLD_CHANGES, CompletableFuture.failedFuture(new IllegalStateException("could not send")));
        image.set(imageWith("orders"));

        CompletableFuture<Void> round = execute(new SyncAction.AddPartitions("payments", 6),
            new SyncAction.HoldChanges("payments", List.of()), new SyncAction.StartTopics(List.of("orders")));

        assertTrue(round.isDone());
        assertEquals(List.of("ADD_PARTITIONS @0", "HOLD_CHANGES @0", "START @0"), commands.sent);
        assertEquals(Set.of("add partitions to topic 'payments'", "record the held changes of topic 'payments'"),
            problems.current().keySet());
        assertTrue(problems.current().get("add partitions to topic 'payments'").contains("the controller is moving"));

        commands.answers.clear();
        execute(new SyncAction.AddPartitions("payments", 6), new SyncAction.HoldChanges("payments", List.of()));
        assertEquals(Map.of(), problems.current(), "both worked in the next round");
    }

    @Test
    void aSchedulerShutDownDuringAWaitRunsNothingMore() {
        CompletableFuture<Void> round = execute(new SyncAction.StartTopics(List.of("orders")), new SyncAction.AddPartitions("payments", 6));
        steps.advance(2 * IMAGE_CHECK_MS);
        assertEquals(1, steps.waitingTasks(), "the next check of the image");

        scheduler.shutdown();
        assertEquals(0, steps.waitingTasks());
        steps.advance(2 * IMAGE_WAIT_MS);

        assertEquals(List.of("START @0"), commands.sent);
        assertFalse(round.isDone(), "the round ends at its wait: no round follows it");
    }

    @Test
    void aSchedulerShutDownBeforeARoundSkipsItsActions() {
        scheduler.shutdown();

        CompletableFuture<Void> round = execute(new SyncAction.StartTopics(List.of("orders")), alterRetention());

        assertTrue(round.isDone());
        assertEquals(List.of(), commands.sent);
        assertEquals(List.of(), destination.attemptsAt);
    }

    private CompletableFuture<Void> execute(SyncAction... actions) {
        MockProducer<byte[], byte[]> state = new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
        return new SyncExecutor("dr", destination, "sync-client", state, commands, image::get, problems, scheduler).execute(List.of(actions));
    }

    private static SyncAction.AlterTopicConfigs alterRetention() {
        return new SyncAction.AlterTopicConfigs("orders", Map.of("retention.ms", "1000"), Set.of(), Map.of("retention.ms", "1000"));
    }

    private static MirrorImage imageWith(String topic) {
        return new MirrorImage(Map.of(), Map.of(topic, new MirrorTopicRecord(topic, "dr", DesiredState.MIRRORING, "id", 3, 1L)), Map.of());
    }

    /** The controller's side of the commands: records each command and when it was sent; answers OK unless told otherwise. */
    private final class RecordingCommands implements MirrorCommands {
        final List<String> sent = new ArrayList<>();
        final Map<CommandOp, CompletableFuture<CommandResult>> answers = new HashMap<>();

        @Override
        public CompletableFuture<CommandResult> send(CommandOp op, String mirror, List<String> topics, List<HeldChange> heldChanges,
                                                     long timeoutMs) {
            sent.add(op + " @" + (time.milliseconds() - startMs));
            return answers.getOrDefault(op, CompletableFuture.completedFuture(CommandResult.ok("id", "done", topics)));
        }
    }

    /** A destination whose config policy refuses the first {@link #refusals} changes, as before it read the declaration. */
    private final class RefusingAdmin extends MockAdminClient {
        final List<Long> attemptsAt = new ArrayList<>();
        int refusals;

        RefusingAdmin() {
            super(List.of(BROKER), BROKER);
            addTopic(false, "orders", List.of(new TopicPartitionInfo(0, BROKER, List.of(BROKER), List.of(BROKER))), Map.of());
        }

        @Override
        public synchronized AlterConfigsResult incrementalAlterConfigs(Map<ConfigResource, Collection<AlterConfigOp>> configs,
                                                                       AlterConfigsOptions options) {
            attemptsAt.add(time.milliseconds() - startMs);
            if (refusals-- > 0) {
                throw new PolicyViolationException("retention.ms=1000 is not declared");
            }
            return super.incrementalAlterConfigs(configs, options);
        }
    }
}
