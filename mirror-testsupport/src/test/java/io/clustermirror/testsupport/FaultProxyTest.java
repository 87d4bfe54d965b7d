package io.clustermirror.testsupport;

import org.apache.kafka.common.protocol.ApiKeys;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The proxy's modes against an echo server on the loopback address. */
class FaultProxyTest {
    private ServerSocket echo;
    private FaultProxy proxy;

    @BeforeEach
    void startEchoServerAndProxy() throws IOException {
        echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::echoLoop, "echo-accept");
        acceptor.setDaemon(true);
        acceptor.start();
        proxy = FaultProxy.start("test", new InetSocketAddress(echo.getInetAddress(), echo.getLocalPort()));
    }

    @AfterEach
    void close() throws IOException {
        proxy.close();
        echo.close();
    }

    private void echoLoop() {
        while (!echo.isClosed()) {
            try {
                Socket s = echo.accept();
                Thread t = new Thread(() -> {
                    try (Socket socket = s) {
                        InputStream in = socket.getInputStream();
                        OutputStream out = socket.getOutputStream();
                        in.transferTo(out);
                    } catch (IOException e) {
                        // the proxy reset or closed the connection
                    }
                }, "echo");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private Socket connect() throws IOException {
        Socket s = new Socket();
        s.connect(proxy.address(), 5_000);
        s.setSoTimeout(10_000);
        return s;
    }

    private static byte[] roundTrip(Socket s, String message) throws IOException {
        byte[] sent = message.getBytes(StandardCharsets.UTF_8);
        s.getOutputStream().write(sent);
        byte[] received = new byte[sent.length];
        new DataInputStream(s.getInputStream()).readFully(received);
        return received;
    }

    @Test
    void passForwardsBothWaysUnchanged() throws Exception {
        try (Socket s = connect()) {
            assertArrayEquals("hello".getBytes(StandardCharsets.UTF_8), roundTrip(s, "hello"));
            assertArrayEquals("again".getBytes(StandardCharsets.UTF_8), roundTrip(s, "again"));
        }
        assertEquals(1, proxy.acceptedConnections());
        // The pump counts a chunk after it wrote it, perhaps after the client read it.
        TestUtils.waitFor(() -> proxy.forwardedBytes() == 20, Duration.ofSeconds(10), "20 bytes forwarded");
    }

    @Test
    void delayHoldsEachDirection() throws IOException {
        proxy.delay(Duration.ofMillis(200));
        try (Socket s = connect()) {
            long start = System.nanoTime();
            roundTrip(s, "slow");
            long elapsedMs = Duration.ofNanos(System.nanoTime() - start).toMillis();
            assertTrue(elapsedMs >= 400, "a round trip through a 200 ms one-way delay took " + elapsedMs + " ms");
        }
    }

    /**
     * A delay is a latency, not a bandwidth limit: 8 MiB are 128 chunks of the proxy's buffer, and a proxy that held each
     * chunk for the delay in turn would take 128 x 200 ms each way.
     */
    @Test
    void delayIsALatencyNotABandwidthLimit() throws Exception {
        proxy.delay(Duration.ofMillis(200));
        byte[] sent = new byte[8 * 1024 * 1024];
        new Random(42).nextBytes(sent);
        try (Socket s = connect()) {
            long start = System.nanoTime();
            Thread writer = new Thread(() -> {
                try {
                    s.getOutputStream().write(sent);
                } catch (IOException e) {
                    // the read below fails then
                }
            }, "delay-writer");
            writer.start();
            byte[] received = new byte[sent.length];
            new DataInputStream(s.getInputStream()).readFully(received);
            long elapsedMs = Duration.ofNanos(System.nanoTime() - start).toMillis();
            writer.join(10_000);
            assertArrayEquals(sent, received);
            assertTrue(elapsedMs >= 400, "8 MiB through a 200 ms one-way delay came back after " + elapsedMs + " ms");
            assertTrue(elapsedMs < 12_800, "8 MiB through a 200 ms one-way delay took " + elapsedMs
                + " ms: the proxy holds each chunk in turn instead of delaying the stream");
        }
    }

    @Test
    void stallHoldsDataUntilPassThenDeliversItInOrder() throws IOException {
        try (Socket s = connect()) {
            roundTrip(s, "before");
            proxy.stall();
            s.getOutputStream().write("held".getBytes(StandardCharsets.UTF_8));
            s.setSoTimeout(500);
            assertThrows(SocketTimeoutException.class, () -> s.getInputStream().read(), "nothing comes through a stalled proxy");
            proxy.pass();
            s.setSoTimeout(10_000);
            byte[] held = new byte[4];
            new DataInputStream(s.getInputStream()).readFully(held);
            assertArrayEquals("held".getBytes(StandardCharsets.UTF_8), held);
        }
    }

    @Test
    void resetCutsOpenConnectionsAlsoWhileStalledAndAcceptsNewOnes() throws IOException {
        try (Socket s = connect()) {
            roundTrip(s, "before");
            proxy.stall();
            s.getOutputStream().write("lost".getBytes(StandardCharsets.UTF_8));
            assertEquals(1, proxy.resetAll());
            proxy.pass();
            int read;
            try {
                read = s.getInputStream().read();
            } catch (SocketException e) {
                read = -1; // connection reset
            }
            assertEquals(-1, read, "a reset connection delivers nothing more");
        }
        try (Socket s = connect()) {
            assertArrayEquals("after".getBytes(StandardCharsets.UTF_8), roundTrip(s, "after"));
        }
        assertEquals(1, proxy.resetConnections());
    }

    @Test
    void aKafkaProxyCountsTheRequestsClientsSendByApiAlsoWhileStalled() throws IOException {
        proxy.close();
        proxy = FaultProxy.startKafka("test", new InetSocketAddress(echo.getInetAddress(), echo.getLocalPort()));
        try (Socket s = connect()) {
            DataInputStream in = new DataInputStream(s.getInputStream());
            roundTripFrame(s, in, ApiKeys.FETCH, 1);
            roundTripFrame(s, in, ApiKeys.FETCH, 2);
            roundTripFrame(s, in, ApiKeys.METADATA, 3);
            assertEquals(Map.of(ApiKeys.FETCH, 2L, ApiKeys.METADATA, 1L), proxy.requestsSent());
            proxy.stall();
            s.getOutputStream().write(frame(ApiKeys.API_VERSIONS, 4));
            TestUtils.waitFor(() -> proxy.requestsSent().getOrDefault(ApiKeys.API_VERSIONS, 0L) == 1L, Duration.ofSeconds(10),
                "the request sent while stalled to count as it arrives");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** A request frame's header: size, API key, version 0, correlation id, and an empty client id. */
    private static byte[] frame(ApiKeys api, int correlationId) {
        ByteBuffer b = ByteBuffer.allocate(4 + 10);
        b.putInt(10).putShort(api.id).putShort((short) 0).putInt(correlationId).putShort((short) -1);
        return b.array();
    }

    /** Sends a request frame through the proxy and reads its echo (which the proxy forwards as a response). */
    private static void roundTripFrame(Socket s, DataInputStream in, ApiKeys api, int correlationId) throws IOException {
        byte[] sent = frame(api, correlationId);
        s.getOutputStream().write(sent);
        byte[] received = new byte[sent.length];
        in.readFully(received);
        assertArrayEquals(sent, received);
    }
}
