package io.clustermirror.chaos;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy in front of one server address whose traffic can be delayed, stalled or cut: the network between the
 * destination's mirror clients and one source broker in a chaos run.
 *
 * <p>Every accepted connection gets its own connection to the target and one pump thread per direction. A pump reads
 * what arrives and forwards it according to the proxy's mode at that moment:
 * <ul>
 *   <li>{@link #pass()}: at once;</li>
 *   <li>{@link #delay(Duration)}: after the delay, per chunk read (one-way latency, not a bandwidth limit);</li>
 *   <li>{@link #stall()}: not until the mode changes, in both directions. The pumps hold what they read, TCP's own
 *       buffers fill, and both peers see a silent link, as in a WAN outage that loses nothing.</li>
 * </ul>
 * {@link #resetAll()} closes every open connection pair with a TCP reset (SO_LINGER 0) on both sides; new connections
 * are accepted as usual. Whatever the mode, bytes are never changed, dropped or reordered within a connection: a peer
 * sees a prefix of what the other sent, and only a reset cuts it short.
 */
public final class FaultProxy implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(FaultProxy.class);
    private static final int BUFFER_SIZE = 64 * 1024;
    private static final int CONNECT_TIMEOUT_MS = 10_000;

    /** How pumps forward what they read. */
    public enum Mode { PASS, DELAY, STALL }

    private final String name;
    private final InetSocketAddress target;
    private final ServerSocket server;
    private final Set<Link> links = ConcurrentHashMap.newKeySet();
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong forwardedBytes = new AtomicLong();
    private final AtomicLong resetConnections = new AtomicLong();
    private final Object modeLock = new Object();
    // Guarded by modeLock; pumps wait on it while STALL.
    private Mode mode = Mode.PASS;
    private long delayMillis;
    private volatile boolean closed;

    private FaultProxy(String name, InetSocketAddress target, ServerSocket server) {
        this.name = name;
        this.target = target;
        this.server = server;
    }

    /** Listens on a free port of the loopback address and forwards every connection to {@code target}. */
    public static FaultProxy start(String name, InetSocketAddress target) throws IOException {
        ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        FaultProxy proxy = new FaultProxy(name, target, server);
        daemon("proxy-" + name + "-accept", proxy::acceptLoop).start();
        log.info("Fault proxy {} listening on {} for {}", name, proxy.address(), target);
        return proxy;
    }

    public String name() {
        return name;
    }

    /** The address clients connect to (loopback, the port the proxy listens on). */
    public InetSocketAddress address() {
        return new InetSocketAddress(server.getInetAddress(), server.getLocalPort());
    }

    public Mode mode() {
        synchronized (modeLock) {
            return mode;
        }
    }

    /** Forwards at once (and releases whatever a stall held). */
    public void pass() {
        setMode(Mode.PASS, 0);
    }

    /** Forwards each chunk {@code delay} after it was read, in each direction. */
    public void delay(Duration delay) {
        setMode(Mode.DELAY, delay.toMillis());
    }

    /** Forwards nothing in either direction until {@link #pass()} or {@link #delay(Duration)}. */
    public void stall() {
        setMode(Mode.STALL, 0);
    }

    private void setMode(Mode newMode, long delay) {
        synchronized (modeLock) {
            mode = newMode;
            delayMillis = delay;
            modeLock.notifyAll();
        }
        log.info("Fault proxy {}: {}{}", name, newMode, newMode == Mode.DELAY ? " " + delay + " ms" : "");
    }

    /** Resets every open connection (both sides see a TCP RST); returns how many connection pairs were open. */
    public int resetAll() {
        List<Link> open = List.copyOf(links);
        open.forEach(link -> link.close(true));
        synchronized (modeLock) {
            // Wakes the pumps of the reset links that wait in a stall.
            modeLock.notifyAll();
        }
        resetConnections.addAndGet(open.size());
        log.info("Fault proxy {}: reset {} connection(s)", name, open.size());
        return open.size();
    }

    /** Connections accepted since the start. */
    public long acceptedConnections() {
        return accepted.get();
    }

    /** Bytes forwarded in both directions since the start. */
    public long forwardedBytes() {
        return forwardedBytes.get();
    }

    /** Connection pairs closed by {@link #resetAll()} since the start. */
    public long resetConnections() {
        return resetConnections.get();
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                if (!closed) {
                    log.warn("Fault proxy {}: accept failed", name, e);
                }
                continue;
            }
            accepted.incrementAndGet();
            Socket upstream = new Socket();
            try {
                upstream.connect(target, CONNECT_TIMEOUT_MS);
            } catch (IOException e) {
                // The target is down: the client sees its connection closed, as it would without the proxy.
                closeQuietly(upstream, false);
                closeQuietly(client, false);
                continue;
            }
            Link link = new Link(client, upstream);
            links.add(link);
            link.start();
        }
    }

    /** Waits while the proxy stalls (until the mode changes or the link closes), then for the delay if any. */
    private void awaitForwarding(Link link) throws InterruptedIOException {
        long delay;
        try {
            synchronized (modeLock) {
                while (mode == Mode.STALL && !link.closed.get() && !closed) {
                    modeLock.wait();
                }
                delay = mode == Mode.DELAY ? delayMillis : 0;
            }
            if (delay > 0) {
                // The fault itself: this pump's data arrives late.
                Thread.sleep(delay);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while holding data");
        }
    }

    /** One client connection and its connection to the target. */
    private final class Link {
        private final Socket client;
        private final Socket upstream;
        private final AtomicBoolean closed = new AtomicBoolean();

        Link(Socket client, Socket upstream) {
            this.client = client;
            this.upstream = upstream;
        }

        void start() {
            String id = name + "-" + client.getPort();
            daemon("proxy-" + id + "-up", () -> pump(client, upstream)).start();
            daemon("proxy-" + id + "-down", () -> pump(upstream, client)).start();
        }

        private void pump(Socket from, Socket to) {
            byte[] buffer = new byte[BUFFER_SIZE];
            try {
                InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream();
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    awaitForwarding(this);
                    out.write(buffer, 0, n);
                    out.flush();
                    forwardedBytes.addAndGet(n);
                }
            } catch (IOException e) {
                // Either side closed or reset the connection: close the pair.
            } finally {
                close(false);
            }
        }

        void close(boolean reset) {
            if (closed.compareAndSet(false, true)) {
                closeQuietly(client, reset);
                closeQuietly(upstream, reset);
                links.remove(this);
            }
        }
    }

    private static void closeQuietly(Socket socket, boolean reset) {
        try {
            if (reset && !socket.isClosed()) {
                socket.setSoLinger(true, 0);
            }
            socket.close();
        } catch (IOException e) {
            // already closed
        }
    }

    private static Thread daemon(String name, Runnable body) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        return thread;
    }

    /** Stops accepting and closes every connection. */
    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException e) {
            log.debug("Fault proxy {}: closing the listener failed", name, e);
        }
        List.copyOf(links).forEach(link -> link.close(false));
        synchronized (modeLock) {
            modeLock.notifyAll();
        }
    }

    @Override
    public String toString() {
        return "FaultProxy(" + name + " " + address() + " -> " + target + ")";
    }
}
