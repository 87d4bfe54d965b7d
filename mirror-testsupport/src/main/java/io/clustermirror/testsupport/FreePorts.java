package io.clustermirror.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Listener ports for servers a test or test tool configures before they start (launched nodes, a static KRaft quorum).
 *
 * <p>Every port is below the kernel's ephemeral range ({@code /proc/sys/net/ipv4/ip_local_port_range}; 32768 where that
 * cannot be read): a port from {@code new ServerSocket(0)} is in that range, so the kernel can hand it to an outgoing
 * connection (even one of the servers' own) before the server binds it. No port is handed out twice in a JVM, and each
 * was free when handed out. As {@code bin/quickstart.sh} picks its ports.
 */
public final class FreePorts {
    private static final Path EPHEMERAL_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
    private static final int DEFAULT_EPHEMERAL_LOW = 32768;
    private static final int FLOOR = 10_000;
    private static final int ATTEMPTS = 1000;
    // Guarded by the class.
    private static final Set<Integer> HANDED_OUT = new HashSet<>();
    private static final int EPHEMERAL_LOW = ephemeralLow();
    /** Below 10000 only if the ephemeral range leaves too little room above it. */
    private static final int LOW = EPHEMERAL_LOW > FLOOR + 1000 ? FLOOR : 1024;

    private FreePorts() {
    }

    /** A free port below the ephemeral range, never handed out before in this JVM. */
    public static synchronized int next() {
        if (EPHEMERAL_LOW <= LOW) {
            throw new IllegalStateException("The kernel's ephemeral port range starts at " + EPHEMERAL_LOW + " (" + EPHEMERAL_RANGE
                + "): no room below it for listener ports; raise its lower bound");
        }
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(LOW, EPHEMERAL_LOW);
            if (!HANDED_OUT.contains(port) && free(port)) {
                HANDED_OUT.add(port);
                return port;
            }
        }
        throw new UncheckedIOException(new IOException("No free port in [" + LOW + ", " + EPHEMERAL_LOW + ") after "
            + ATTEMPTS + " attempts (" + HANDED_OUT.size() + " handed out in this JVM)"));
    }

    /** The lowest port of the ephemeral range. */
    static int ephemeralLow() {
        try {
            // Not Files.readString: it trusts the size procfs reports and reads too little.
            String[] range = Files.readAllLines(EPHEMERAL_RANGE, StandardCharsets.US_ASCII).get(0).trim().split("\\s+");
            return Integer.parseInt(range[0]);
        } catch (IOException | RuntimeException e) {
            return DEFAULT_EPHEMERAL_LOW;
        }
    }

    private static boolean free(int port) {
        try {
            new ServerSocket(port).close();
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
