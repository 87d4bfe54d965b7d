package io.clustermirror.admin;

import io.clustermirror.admin.KafkaClusterMirrorAdmin.ClusterAccess;
import io.clustermirror.common.ClusterMirrorException;
import io.clustermirror.common.InternalTopics;
import io.clustermirror.common.MirrorError;

import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The client's failure handling, against an address where no broker listens. */
class KafkaClusterMirrorAdminTest {
    // Nothing listens on port 1 of the loopback address: connections are refused at once.
    private static final Map<String, Object> NO_BROKER = Map.of("bootstrap.servers", "127.0.0.1:1",
        "reconnect.backoff.max.ms", 100);

    private static ClusterMirrorException failure(KafkaFuture<?> future) {
        ExecutionException e = assertThrows(ExecutionException.class, future::get);
        return assertInstanceOf(ClusterMirrorException.class, e.getCause());
    }

    @Test
    void unreachableDestinationFailsEveryFutureWithinItsTimeout() {
        try (ClusterMirrorAdmin admin = ClusterMirrorAdmin.create(NO_BROKER)) {
            ClusterMirrorException list = failure(admin.listClusterMirrors(
                new ListClusterMirrorsOptions().timeoutMs(300)).listings());
            assertEquals(MirrorError.MIRROR_CONTROLLER_UNAVAILABLE, list.error());
            assertEquals("MIRROR_CONTROLLER_UNAVAILABLE: the destination cluster did not answer within 300 ms; "
                + "check bootstrap.servers and the client's security settings", list.getMessage());

            DescribeClusterMirrorsResult describe = admin.describeClusterMirrors(List.of("a", "b", "a"),
                new DescribeClusterMirrorsOptions().timeoutMs(300));
            assertEquals(Set.of("a", "b"), describe.describedMirrors().keySet());
            for (KafkaFuture<ClusterMirrorDescription> future : describe.describedMirrors().values()) {
                assertEquals(MirrorError.MIRROR_CONTROLLER_UNAVAILABLE, failure(future).error());
            }

            assertEquals(MirrorError.MIRROR_CONTROLLER_UNAVAILABLE, failure(admin.startMirrorTopics("dr",
                List.of("a"), List.of(), new MirrorTopicsOptions().timeoutMs(300)).topics()).error());
        }
    }

    @Test
    void anInvalidPatternIsRefusedBeforeTheClusterIsAsked() {
        try (ClusterMirrorAdmin admin = ClusterMirrorAdmin.create(NO_BROKER)) {
            // With no broker to ask, only the client's own check can answer INVALID_REQUEST (anything else times out).
            ClusterMirrorException lookaround = failure(admin.startMirrorTopics("dr", List.of("(?=orders).*"), List.of(),
                new MirrorTopicsOptions().timeoutMs(30_000)).topics());
            assertEquals(MirrorError.INVALID_REQUEST, lookaround.error());
            assertTrue(lookaround.getMessage().contains("'(?=orders).*' is not a valid regular expression"), lookaround.getMessage());
            assertEquals(MirrorError.INVALID_REQUEST, failure(admin.pauseMirrorTopics("dr", List.of("orders"), List.of("b["),
                new MirrorTopicsOptions().timeoutMs(30_000)).topics()).error(), "excludes are checked too");
        }
    }

    @Test
    void operationsAfterCloseFail() {
        ClusterMirrorAdmin admin = ClusterMirrorAdmin.create(NO_BROKER);
        admin.close(Duration.ofSeconds(5));
        assertEquals("UNKNOWN_SERVER_ERROR: the admin client is closed",
            failure(admin.deleteClusterMirror("dr").all()).getMessage());
    }

    @Test
    void closeIsBoundedAndFailsOperationsStillQueued() {
        ClusterMirrorAdmin admin = ClusterMirrorAdmin.create(NO_BROKER);
        KafkaFuture<?> running = admin.listClusterMirrors(new ListClusterMirrorsOptions().timeoutMs(30_000)).listings();
        KafkaFuture<?> queued = admin.deleteClusterMirror("dr", new DeleteClusterMirrorOptions().timeoutMs(30_000)).all();
        long start = System.nanoTime();
        admin.close(Duration.ofMillis(200));
        assertTrue(Duration.ofNanos(System.nanoTime() - start).toMillis() < 10_000);
        assertEquals("UNKNOWN_SERVER_ERROR: the admin client was closed", failure(queued).getMessage());
        failure(running);
    }

    @Test
    void failuresBecomeClusterMirrorExceptions() {
        ClusterMirrorException mirror = new ClusterMirrorException(MirrorError.CLUSTER_MIRROR_NOT_EMPTY, "dr has topics");
        assertSame(mirror, KafkaClusterMirrorAdmin.toMirrorException(new ExecutionException(mirror), 10, ClusterAccess.ALTER));
        assertEquals(MirrorError.MIRROR_CONTROLLER_UNAVAILABLE,
            KafkaClusterMirrorAdmin.toMirrorException(new TimeoutException("metadata"), 10, ClusterAccess.ALTER).error());
        assertEquals(MirrorError.MIRROR_CONTROLLER_UNAVAILABLE, KafkaClusterMirrorAdmin.toMirrorException(
            new java.util.concurrent.TimeoutException(), 10, ClusterAccess.DESCRIBE).error());
        assertEquals("UNKNOWN_SERVER_ERROR: TopicAuthorizationException: Not authorized to access topics: [orders]",
            KafkaClusterMirrorAdmin.toMirrorException(
                new ExecutionException(new TopicAuthorizationException(Set.of("orders"))), 10, ClusterAccess.DESCRIBE).getMessage());
    }

    /** The brokers refuse the control plane's topics (or the command producer's id): the error names the permission. */
    @Test
    void refusalsOnTheControlPlaneNameTheClusterPermission() {
        ClusterMirrorException command = KafkaClusterMirrorAdmin.toMirrorException(
            new ExecutionException(new TopicAuthorizationException(Set.of(InternalTopics.COMMANDS))), 10, ClusterAccess.ALTER);
        assertEquals(MirrorError.CLUSTER_AUTHORIZATION_FAILED, command.error());
        assertTrue(command.getMessage().contains("--operation Alter --cluster"), command.getMessage());
        ClusterMirrorException producerId = KafkaClusterMirrorAdmin.toMirrorException(
            new ClusterAuthorizationException("idempotent write"), 10, ClusterAccess.ALTER);
        assertEquals(MirrorError.CLUSTER_AUTHORIZATION_FAILED, producerId.error());
        // A producer refused once fails its next sends with its fatal state, caused by the refusal.
        ClusterMirrorException later = KafkaClusterMirrorAdmin.toMirrorException(new org.apache.kafka.common.KafkaException(
            "Cannot execute transactional method because we are in an error state", new ClusterAuthorizationException("refused")),
            10, ClusterAccess.ALTER);
        assertEquals(MirrorError.CLUSTER_AUTHORIZATION_FAILED, later.error(), later.getMessage());
        // Admin's describeTopics names no topic.
        ClusterMirrorException read = KafkaClusterMirrorAdmin.toMirrorException(
            new ExecutionException(new TopicAuthorizationException("not allowed")), 10, ClusterAccess.DESCRIBE);
        assertEquals(MirrorError.CLUSTER_AUTHORIZATION_FAILED, read.error());
        assertTrue(read.getMessage().contains("--operation Describe --cluster"), read.getMessage());
    }
}
