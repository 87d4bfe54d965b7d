package io.clustermirror.common;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The probe judges only a TLS record in reply to a plaintext request: what Kafka's clients would read as a response of
 * about 350 MB and allocate. Listeners here are local sockets that answer one connection with fixed bytes.
 */
class ListenerProbeTest {
    /** A TLS alert record, as a TLS listener sends it when a handshake gets plaintext: 0x15 0x03 0x03, length 2. */
    private static final byte[] TLS_ALERT = {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x50};
    /** The start of a Kafka ApiVersions response: a small size prefix, then the correlation id. */
    private static final byte[] KAFKA_REPLY = {0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x01};

    private static Properties client(int port, String protocol) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", "localhost:" + port);
        if (protocol != null) {
            p.setProperty("security.protocol", protocol);
        }
        return p;
    }

    /** Serves one connection: reads the request, answers with {@code reply}, closes. */
    private static ServerSocket listener(byte[] reply) throws IOException {
        ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        CompletableFuture.runAsync(() -> {
            try (Socket s = server.accept()) {
                InputStream in = s.getInputStream();
                in.readNBytes(14);
                s.getOutputStream().write(reply);
                s.getOutputStream().flush();
            } catch (IOException e) {
                // the probe closed first
            }
        });
        return server;
    }

    @Test
    void aPlaintextClientAtATlsListenerIsAConfigErrorNamingTheFix() throws IOException {
        for (String protocol : new String[] {null, "PLAINTEXT", "SASL_PLAINTEXT"}) {
            try (ServerSocket tls = listener(TLS_ALERT)) {
                ListenerProbe.TlsListenerException e = assertThrows(ListenerProbe.TlsListenerException.class,
                    () -> ListenerProbe.check(client(tls.getLocalPort(), protocol)));
                String fix = "SASL_PLAINTEXT".equals(protocol) ? "security.protocol=SASL_SSL" : "security.protocol=SSL";
                assertTrue(e.getMessage().contains(":" + tls.getLocalPort() + " answers with TLS") && e.getMessage().contains(fix),
                    e.getMessage());
            }
        }
    }

    @Test
    void aKafkaReplyAnUnreachableListenerOrATlsClientAreLeftToTheClient() throws IOException {
        try (ServerSocket kafka = listener(KAFKA_REPLY)) {
            assertDoesNotThrow(() -> ListenerProbe.check(client(kafka.getLocalPort(), "PLAINTEXT")));
        }
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        assertDoesNotThrow(() -> ListenerProbe.check(client(closedPort, null)));
        try (ServerSocket tls = listener(TLS_ALERT)) {
            assertDoesNotThrow(() -> ListenerProbe.check(client(tls.getLocalPort(), "SSL")), "TLS clients are not probed");
        }
    }
}
