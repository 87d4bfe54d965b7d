package io.clustermirror.bench;

import io.clustermirror.common.secrets.BrokerClientConfigs;
import io.clustermirror.testsupport.FaultProxy;
import io.clustermirror.testsupport.FreePorts;
import io.clustermirror.testsupport.Keystores;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The links other than loopback that a mirror scenario can read the source through, each a scenario of its own next to
 * {@code mirror} (one destination broker, loopback, no limit):
 * <ul>
 *   <li>{@code mirror-wan-<rtt ms>}: a WAN of that round trip, half of it (whole milliseconds) added each way by a {@link FaultProxy} in
 *       front of a listener of the source broker that is advertised at the proxy's address, so that every connection
 *       of the mirror, not only the bootstrap, crosses it. A latency, not a bandwidth limit;</li>
 *   <li>{@code mirror-tls}: a TLS listener (TLS 1.3 by Kafka's defaults, a self-signed EC certificate), the mirror
 *       trusting it through a truststore whose password the mirror config names by a reference to a file config
 *       provider of the destination brokers (an inline secret is refused where the brokers run with ACLs off);</li>
 *   <li>{@code mirror-throttle-<MB/s>}: loopback with {@code mirror.fetch.rate.limit.bytes.per.sec} at that many
 *       MB/s (10^6 bytes), the link throttle an operator sets so that a catch-up does not fill a WAN.</li>
 * </ul>
 * The source's extra listeners exist only when a scenario needs them; the preloaded data and the loopback scenarios
 * are the same either way.
 */
final class SourceLinks implements AutoCloseable {
    static final String WAN = "mirror-wan-";
    static final String TLS = "mirror-tls";
    static final String THROTTLE = "mirror-throttle-";
    private static final String WAN_LISTENER = "WAN";
    private static final String TLS_LISTENER = "TLS";
    private static final String SECRETS_FILE = "secrets.properties";

    private final FaultProxy proxy;
    private final int wanPort;
    private final int tlsPort;
    private final Keystores.Store keystore;
    private final Keystores.Store truststore;
    private final Path secretsDir;

    private SourceLinks(FaultProxy proxy, int wanPort, int tlsPort, Keystores.Store keystore, Keystores.Store truststore,
                        Path secretsDir) {
        this.proxy = proxy;
        this.wanPort = wanPort;
        this.tlsPort = tlsPort;
        this.keystore = keystore;
        this.truststore = truststore;
        this.secretsDir = secretsDir;
    }

    /** Whether {@code scenario} names a link scenario, and a valid one ({@link IllegalArgumentException} if not). */
    static boolean isLink(String scenario) {
        if (scenario.equals(TLS)) {
            return true;
        }
        for (String prefix : List.of(WAN, THROTTLE)) {
            if (scenario.startsWith(prefix)) {
                int amount;
                try {
                    amount = Integer.parseInt(scenario.substring(prefix.length()));
                } catch (NumberFormatException e) {
                    amount = 0;
                }
                if (amount < 1) {
                    throw new IllegalArgumentException("scenario " + scenario + ": " + prefix + " takes a whole number of "
                        + (prefix.equals(WAN) ? "milliseconds of round trip" : "MB/s") + " of at least 1, e.g. " + prefix + "20");
                }
                return true;
            }
        }
        return false;
    }

    /** The proxy and TLS stores the {@code scenarios} need (in {@code dir}); nothing for loopback-only runs. */
    static SourceLinks create(Path dir, Set<String> scenarios) throws IOException, InterruptedException {
        boolean wan = scenarios.stream().anyMatch(s -> s.startsWith(WAN));
        boolean tls = scenarios.contains(TLS);
        int wanPort = wan ? FreePorts.next() : -1;
        FaultProxy proxy = wan ? FaultProxy.start("wan", new InetSocketAddress("localhost", wanPort)) : null;
        Keystores.Store keystore = null;
        Keystores.Store truststore = null;
        Path secretsDir = null;
        if (tls) {
            Path stores = Files.createDirectories(dir.resolve("tls"));
            keystore = Keystores.keystore(stores, "source-broker", "CN=localhost");
            truststore = Keystores.truststore(stores, "mirror-truststore", keystore);
            secretsDir = stores;
            Files.writeString(stores.resolve(SECRETS_FILE), "truststore.password=" + truststore.password() + "\n");
        }
        return new SourceLinks(proxy, wanPort, tls ? FreePorts.next() : -1, keystore, truststore, secretsDir);
    }

    /** The source broker's listeners besides PLAINTEXT and CONTROLLER. */
    List<BenchCluster.Listener> listeners() {
        List<BenchCluster.Listener> listeners = new ArrayList<>();
        if (proxy != null) {
            listeners.add(new BenchCluster.Listener(1, WAN_LISTENER, "PLAINTEXT", wanPort, proxy.address().getPort()));
        }
        if (keystore != null) {
            listeners.add(new BenchCluster.Listener(1, TLS_LISTENER, "SSL", tlsPort, tlsPort));
        }
        return listeners;
    }

    /** The source broker's configs for its TLS listener (none without one). */
    Map<String, String> sourceConfig() {
        Map<String, String> config = new LinkedHashMap<>();
        if (keystore != null) {
            String prefix = "listener.name." + TLS_LISTENER.toLowerCase(Locale.ROOT) + ".";
            config.put(prefix + "ssl.keystore.type", "PKCS12");
            config.put(prefix + "ssl.keystore.location", keystore.path().toString());
            config.put(prefix + "ssl.keystore.password", keystore.password());
        }
        return config;
    }

    /** The destination brokers' configs a scenario needs: the file config provider that holds the truststore password. */
    Map<String, String> destinationConfig(String scenario) {
        if (!scenario.equals(TLS)) {
            return Map.of();
        }
        String provider = BrokerClientConfigs.CONFIG_PROVIDERS_CONFIG + ".file";
        return Map.of(BrokerClientConfigs.CONFIG_PROVIDERS_CONFIG, "file",
            provider + ".class", "org.apache.kafka.common.config.provider.FileConfigProvider",
            provider + ".param.allowed.paths", secretsDir.toString());
    }

    /**
     * The mirror's configs for reading the source through the scenario's link, and sets the link up (the WAN's delay).
     * Call {@link #reset()} after the scenario.
     */
    Map<String, String> enter(String scenario, String loopbackBootstrap) {
        Map<String, String> config = new LinkedHashMap<>();
        if (scenario.startsWith(WAN)) {
            int rttMs = Integer.parseInt(scenario.substring(WAN.length()));
            proxy.delay(Duration.ofMillis(rttMs / 2));
            config.put("bootstrap.servers", "localhost:" + proxy.address().getPort());
        } else if (scenario.equals(TLS)) {
            config.put("bootstrap.servers", "localhost:" + tlsPort);
            config.put("security.protocol", "SSL");
            config.put("ssl.truststore.type", "PKCS12");
            config.put("ssl.truststore.location", truststore.path().toString());
            config.put("ssl.truststore.password", "${file:" + secretsDir.resolve(SECRETS_FILE) + ":truststore.password}");
        } else {
            config.put("bootstrap.servers", loopbackBootstrap);
            if (scenario.startsWith(THROTTLE)) {
                long mbps = Long.parseLong(scenario.substring(THROTTLE.length()));
                config.put("mirror.fetch.rate.limit.bytes.per.sec", String.valueOf(mbps * 1_000_000L));
            }
        }
        return config;
    }

    /** What a result records about the link (no secret). */
    static String describe(String scenario) {
        if (scenario.startsWith(WAN)) {
            return "source read through a proxy adding " + Integer.parseInt(scenario.substring(WAN.length())) / 2
                + " ms each way (a latency, not a bandwidth limit)";
        } else if (scenario.equals(TLS)) {
            return "source read over TLS (SSL listener, PKCS12 EC certificate, the JDK's default TLS version and ciphers)";
        } else if (scenario.startsWith(THROTTLE)) {
            return "mirror.fetch.rate.limit.bytes.per.sec = " + scenario.substring(THROTTLE.length()) + " MB/s, loopback";
        }
        return "loopback";
    }

    /** Bytes the WAN proxy forwarded so far, both ways (0 without one). */
    long forwardedBytes() {
        return proxy == null ? 0 : proxy.forwardedBytes();
    }

    /** Takes the WAN's delay off again. */
    void reset() {
        if (proxy != null) {
            proxy.pass();
        }
    }

    @Override
    public void close() {
        if (proxy != null) {
            proxy.close();
        }
    }
}
