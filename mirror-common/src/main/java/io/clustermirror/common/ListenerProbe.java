package io.clustermirror.common;

import io.clustermirror.common.compat.ClientInternals;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.security.auth.SecurityProtocol;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;

/**
 * Finds a client config whose {@code security.protocol} does not encrypt while the listener it points at speaks TLS,
 * before a Kafka client connects there. Kafka's clients read the first four bytes of a reply as the size of the
 * response and allocate it: a TLS alert ({@code 0x15 0x03 0x03 ...}) reads as about 350 MB. The probe sends one small
 * ApiVersions request itself and looks at the first two bytes of the reply; it judges only a TLS record, and leaves
 * every other outcome (no answer, a refused connection, a Kafka reply) to the real client.
 */
public final class ListenerProbe {
    private static final int CONNECT_TIMEOUT_MS = 5_000;
    private static final int READ_TIMEOUT_MS = 5_000;
    /** size 10, ApiVersions (key 18) v0, correlation id 1, null client id. */
    private static final byte[] API_VERSIONS_V0 = ByteBuffer.allocate(14)
        .putInt(10).putShort((short) 18).putShort((short) 0).putInt(1).putShort((short) -1).array();
    private static final int TLS_ALERT = 0x15;
    private static final int TLS_HANDSHAKE = 0x16;
    private static final int TLS_MAJOR_VERSION = 0x03;

    private ListenerProbe() {
    }

    /** A client config without TLS meets a TLS listener. */
    public static final class TlsListenerException extends InvalidConfigurationException {
        private static final long serialVersionUID = 1L;

        TlsListenerException(String message) {
            super(message);
        }
    }

    /**
     * @param clientProperties the client configs of a cluster (bootstrap servers and security)
     * @throws TlsListenerException naming the address and the fix, when a bootstrap server answers a non-TLS client
     *                              with TLS
     */
    public static void check(Properties clientProperties) {
        String protocol = clientProperties.getProperty(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG,
            CommonClientConfigs.DEFAULT_SECURITY_PROTOCOL).trim().toUpperCase(java.util.Locale.ROOT);
        if (protocol.equals(SecurityProtocol.SSL.name) || protocol.equals(SecurityProtocol.SASL_SSL.name)) {
            return; // a TLS client meeting a plaintext listener fails its handshake with a clear error of its own
        }
        String servers = clientProperties.getProperty(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "");
        List<InetSocketAddress> addresses;
        try {
            addresses = ClientInternals.bootstrapAddresses(Arrays.asList(servers.split(",")));
        } catch (RuntimeException e) {
            return; // the client reports a bad address itself
        }
        for (InetSocketAddress address : addresses) {
            if (speaksTls(address)) {
                String tlsProtocol = protocol.equals(SecurityProtocol.SASL_PLAINTEXT.name) ? "SASL_SSL" : "SSL";
                throw new TlsListenerException("the listener at " + address.getHostString() + ":" + address.getPort()
                    + " answers with TLS, but security.protocol is " + protocol + ": set security.protocol=" + tlsProtocol
                    + " (and the ssl.* configs), or point bootstrap.servers at a " + protocol + " listener");
            }
        }
    }

    private static boolean speaksTls(InetSocketAddress address) {
        try (Socket socket = new Socket()) {
            socket.connect(address, CONNECT_TIMEOUT_MS);
            socket.setSoTimeout(READ_TIMEOUT_MS);
            OutputStream out = socket.getOutputStream();
            out.write(API_VERSIONS_V0);
            out.flush();
            InputStream in = new DataInputStream(socket.getInputStream());
            int first = in.read();
            int second = in.read();
            return (first == TLS_ALERT || first == TLS_HANDSHAKE) && second == TLS_MAJOR_VERSION;
        } catch (IOException e) {
            return false; // unreachable or closed: the real client reports it
        }
    }
}
