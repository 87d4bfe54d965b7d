package io.clustermirror.common.compat;

import io.clustermirror.testsupport.HostilePeer;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.memory.MemoryPool;
import org.apache.kafka.common.network.NetworkReceive;
import org.apache.kafka.test.TestUtils;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.nio.channels.ScatteringByteChannel;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Kafka clients of an untrusted peer with a {@link ResponseBound}, against a {@link HostilePeer} that announces a
 * response of 2 GiB (or of one byte above the bound) in answer to the client's first request. Run with the build's
 * test heap: Kafka's own clients try to allocate what the peer announces (the control shows it).
 */
class BoundedClientsTest {
    private static final int BOUND = 1024 * 1024;
    private static final ResponseBound RESPONSE_BOUND = new ResponseBound(BOUND, "the source of mirror 'm'",
        "Check that bootstrap.servers names a Kafka listener.");
    private static final int TWO_GIB = Integer.MAX_VALUE;

    @Test
    void anAdminClientClosesAConnectionThatAnnouncesTwoGibibytesAndKeepsItsThread() throws Exception {
        adminSurvives(TWO_GIB, "bounded-admin-2g");
    }

    @Test
    void anAdminClientClosesAConnectionThatAnnouncesOneByteAboveTheBound() throws Exception {
        adminSurvives(BOUND + 1, "bounded-admin-bound");
    }

    @Test
    void aConsumerClosesAConnectionThatAnnouncesTwoGibibytes() throws Exception {
        consumerSurvives(null);
    }

    /** The consumer protocol's implementation connects from a thread of its own: the bounded consumer is classic. */
    @Test
    void aConsumerIsBoundedWhateverGroupProtocolItsConfigsName() throws Exception {
        consumerSurvives("consumer");
    }

    private static void consumerSurvives(String groupProtocol) throws Exception {
        try (HostilePeer peer = HostilePeer.announcing(TWO_GIB)) {
            Properties props = props(peer, "bounded-consumer");
            if (groupProtocol != null) {
                props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, groupProtocol);
            }
            try (KafkaConsumer<byte[], byte[]> consumer = BoundedClients.consumer(props, RESPONSE_BOUND)) {
                assertThrows(org.apache.kafka.common.errors.TimeoutException.class,
                    () -> consumer.partitionsFor("t", Duration.ofSeconds(3)));
            }
            assertTrue(peer.connectionsClosedByClient() >= 2,
                "the consumer gave each connection up and reconnected: " + peer.connectionsClosedByClient());
        }
    }

    /** The control: Kafka's own admin client allocates what the peer announces, which kills its thread. */
    @Test
    void kafkasOwnAdminClientDiesOfTheAnnouncedSize() throws Exception {
        try (HostilePeer peer = HostilePeer.announcing(TWO_GIB);
             Admin admin = Admin.create(props(peer, "unbounded-admin"))) {
            admin.describeCluster();
            TestUtils.waitForCondition(() -> adminThread("unbounded-admin") == null, 15_000,
                "Kafka's admin client thread kept running after a 2 GiB response size");
        }
    }

    /** What kills it: Kafka's receive asks its buffer pool for the announced size; the bounding pool refuses instead. */
    @Test
    void kafkasReceiveAllocatesTheAnnouncedSizeUnlessThePoolRefuses() {
        OutOfMemoryError oom = assertThrows(OutOfMemoryError.class,
            () -> new NetworkReceive(NetworkReceive.UNLIMITED, "-1", MemoryPool.NONE).readFrom(announcing(TWO_GIB)));
        assertTrue(oom.getMessage().contains("array size"), oom.getMessage());
        NetworkReceive bounded = new NetworkReceive(NetworkReceive.UNLIMITED, "-1", new BoundingMemoryPool(RESPONSE_BOUND));
        assertThrows(ResponseBound.TooLargeException.class, () -> bounded.readFrom(announcing(TWO_GIB)));
        assertFalse(bounded.memoryAllocated());
    }

    @Test
    void theBoundNamesThePeerTheSizeTheBoundAndTheRemedy() {
        BoundingMemoryPool pool = new BoundingMemoryPool(RESPONSE_BOUND);
        assertEquals(BOUND, pool.tryAllocate(BOUND).capacity());
        ResponseBound.TooLargeException e = assertThrows(ResponseBound.TooLargeException.class, () -> pool.tryAllocate(BOUND + 1));
        assertEquals("the source of mirror 'm' answered with a response of 1048577 bytes, above the bound of 1048576 bytes: "
            + "the connection is closed without reading it. Check that bootstrap.servers names a Kafka listener.", e.getMessage());
    }

    private static void adminSurvives(int announced, String clientId) throws Exception {
        try (HostilePeer peer = HostilePeer.announcing(announced);
             Admin admin = BoundedClients.admin(props(peer, clientId), RESPONSE_BOUND)) {
            ExecutionException failed = assertThrows(ExecutionException.class,
                () -> admin.describeCluster().nodes().get(10, TimeUnit.SECONDS));
            assertTrue(failed.getCause() instanceof org.apache.kafka.common.errors.TimeoutException, String.valueOf(failed.getCause()));
            assertTrue(peer.connectionsClosedByClient() >= 2,
                "the client gave each connection up and reconnected: " + peer.connectionsClosedByClient());
            Thread thread = adminThread(clientId);
            assertTrue(thread != null && thread.isAlive(), "the admin client's thread runs on");
        }
    }

    /** A channel whose bytes are a response size prefix. */
    private static ScatteringByteChannel announcing(int size) throws IOException {
        Pipe pipe = Pipe.open();
        pipe.sink().write(ByteBuffer.allocate(4).putInt(0, size));
        return pipe.source();
    }

    private static Properties props(HostilePeer peer, String clientId) {
        Properties props = new Properties();
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, peer.bootstrap());
        props.put(CommonClientConfigs.CLIENT_ID_CONFIG, clientId);
        props.put(CommonClientConfigs.RECONNECT_BACKOFF_MS_CONFIG, 50);
        props.put(CommonClientConfigs.RECONNECT_BACKOFF_MAX_MS_CONFIG, 200);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 2_000);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 3_000);
        return props;
    }

    /** Kafka's admin client thread of {@code clientId}, or null when it is not running. */
    private static Thread adminThread(String clientId) {
        return Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.getName().equals("kafka-admin-client-thread | " + clientId) && t.isAlive())
            .findFirst().orElse(null);
    }
}
