package io.clustermirror.testsupport;

import org.apache.kafka.common.protocol.ApiKeys;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * A TCP proxy in front of one server address whose traffic can be delayed, stalled or cut: the network between the
 * destination's mirror clients and one source broker in a chaos run.
 *
 * <p>Every accepted connection gets its own connection to the target and, per direction, a thread that reads what
 * arrives and one that forwards it according to the proxy's mode at that moment:
 * <ul>
 *   <li>{@link #pass()}: at once;</li>
 *   <li>{@link #delay(Duration)}: the delay after it was read (a one-way latency, not a bandwidth limit: a direction
 *       reads ahead while earlier data waits, up to 16 MiB or 16 frames);</li>
 *   <li>{@link #throttle(long)}: at a limited rate, each direction of each connection on its own (a slow link);</li>
 *   <li>{@link #stall()}: not until the mode changes, in both directions. The pumps hold what they read, TCP's own
 *       buffers fill, and both peers see a silent link, as in a WAN outage that loses nothing.</li>
 * </ul>
 * {@link #resetAll()} closes every open connection pair with a TCP reset (SO_LINGER 0) on both sides; new connections
 * are accepted as usual. Whatever the mode, bytes are never dropped or reordered within a connection: a peer sees a
 * prefix of what the other sent, and only a reset cuts it short.
 *
 * <p>A proxy of the Kafka protocol ({@link #startKafka}) forwards whole requests and responses (size-delimited frames)
 * and can corrupt fetch responses ({@link #corruptFetches}): the one test-only fault that changes bytes, one byte of
 * the record data of one partition in each fetch response, so that the batch's CRC no longer matches.
 */
public final class FaultProxy implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(FaultProxy.class);
    private static final int BUFFER_SIZE = 64 * 1024;
    private static final int CONNECT_TIMEOUT_MS = 10_000;
    /** Chunks read ahead per direction: up to 16 MiB in flight, as on a long link with a large TCP window. */
    private static final int QUEUED_CHUNKS = 256;
    /** Frames read ahead per direction (Kafka proxies). */
    private static final int QUEUED_FRAMES = 16;
    /** How often a waiting pump thread looks whether its link closed. */
    private static final long POLL_MS = 100;

    /** How pumps forward what they read. */
    public enum Mode { PASS, DELAY, STALL, THROTTLE }

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
    private long modeAmount;
    private volatile boolean closed;
    /** Whether the traffic is Kafka's protocol, forwarded frame by frame. */
    private final boolean kafka;
    /** The partition whose fetched records are corrupted, if any. */
    private volatile FetchCorruption.Target corrupted;
    private final AtomicLong corruptedResponses = new AtomicLong();
    /** Base offsets of the batches corrupted, in the order they were forwarded. */
    private final List<Long> corruptedOffsets = new CopyOnWriteArrayList<>();
    /** Kafka proxies: the requests clients sent, by API, whether or not the mode let them through yet. */
    private final Map<ApiKeys, LongAdder> requestsSent = new ConcurrentHashMap<>();

    private FaultProxy(String name, InetSocketAddress target, ServerSocket server, boolean kafka) {
        this.name = name;
        this.target = target;
        this.server = server;
        this.kafka = kafka;
    }

    /** Listens on a free port of the loopback address and forwards every connection to {@code target}, bytes as they come. */
    public static FaultProxy start(String name, InetSocketAddress target) throws IOException {
        return start(name, target, false);
    }

    /** The same for a Kafka listener: forwards whole frames, and can {@link #corruptFetches corrupt fetch responses}. */
    public static FaultProxy startKafka(String name, InetSocketAddress target) throws IOException {
        return start(name, target, true);
    }

    private static FaultProxy start(String name, InetSocketAddress target, boolean kafka) throws IOException {
        ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        FaultProxy proxy = new FaultProxy(name, target, server, kafka);
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

    /** Forwards at most {@code bytesPerSecond} in each direction of each connection. */
    public void throttle(long bytesPerSecond) {
        setMode(Mode.THROTTLE, bytesPerSecond);
    }

    /** Forwards nothing in either direction until {@link #pass()} or {@link #delay(Duration)}. */
    public void stall() {
        setMode(Mode.STALL, 0);
    }

    /** @param amount the delay in milliseconds ({@link Mode#DELAY}) or the rate in bytes per second ({@link Mode#THROTTLE}) */
    private void setMode(Mode newMode, long amount) {
        synchronized (modeLock) {
            mode = newMode;
            modeAmount = amount;
            modeLock.notifyAll();
        }
        log.info("Fault proxy {}: {}{}", name, newMode, newMode == Mode.DELAY ? " " + amount + " ms"
            : newMode == Mode.THROTTLE ? " " + amount + " bytes/s" : "");
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

    /**
     * From now on flips one byte of the record data of {@code target} in every fetch response that carries some (Kafka
     * proxies only), until {@link #stopCorrupting()}.
     */
    public void corruptFetches(FetchCorruption.Target target) {
        if (!kafka) {
            throw new IllegalStateException("proxy " + name + " does not frame the Kafka protocol: started with start(), not startKafka()");
        }
        corrupted = target;
        log.info("Fault proxy {}: corrupting fetched records of {}", name, target);
    }

    public void stopCorrupting() {
        corrupted = null;
        log.info("Fault proxy {}: fetched records pass unchanged", name);
    }

    /** Fetch responses corrupted since the start. */
    public long corruptedResponses() {
        return corruptedResponses.get();
    }

    /** The base offsets of the corrupted batches, in order. */
    public List<Long> corruptedOffsets() {
        return List.copyOf(corruptedOffsets);
    }

    /** Connections accepted since the start. */
    public long acceptedConnections() {
        return accepted.get();
    }

    /** Bytes forwarded in both directions since the start. */
    public long forwardedBytes() {
        return forwardedBytes.get();
    }

    /**
     * Kafka proxies: the requests clients sent through the proxy since the start, by API, counted as they arrive (a
     * request sent during a stall counts then, not when it is let through): how hard the clients knock.
     */
    public Map<ApiKeys, Long> requestsSent() {
        Map<ApiKeys, Long> counts = new EnumMap<>(ApiKeys.class);
        requestsSent.forEach((api, n) -> counts.put(api, n.sum()));
        return counts;
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
            try {
                link.start();
            } catch (IOException e) {
                link.close(false);
            }
        }
    }

    /**
     * Waits while the proxy stalls (until the mode changes or the link closes), then until {@code chunk} is due: its delay
     * after it was read, or as long as its bytes take at the throttled rate.
     */
    private void awaitForwarding(Link link, Chunk chunk) throws InterruptedIOException {
        try {
            long waitNanos;
            synchronized (modeLock) {
                while (mode == Mode.STALL && !link.closed.get() && !closed) {
                    modeLock.wait();
                }
                waitNanos = switch (mode) {
                    case DELAY -> chunk.readNanos() + TimeUnit.MILLISECONDS.toNanos(modeAmount) - System.nanoTime();
                    case THROTTLE -> chunk.bytes().length * 1_000_000_000L / modeAmount;
                    default -> 0;
                };
            }
            if (waitNanos > 0) {
                // The fault itself: this chunk arrives late.
                TimeUnit.NANOSECONDS.sleep(waitNanos);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while holding data");
        }
    }

    /** What one direction read at once (a chunk, or a whole frame of the Kafka protocol), and when it was read. */
    private record Chunk(byte[] bytes, long readNanos) {
    }

    /** Reads the next chunk from a connection; null at its end. */
    @FunctionalInterface
    private interface ChunkReader {
        byte[] read() throws IOException;
    }

    /** One client connection and its connection to the target. */
    private final class Link {
        private final Socket client;
        private final Socket upstream;
        private final AtomicBoolean closed = new AtomicBoolean();
        /** Kafka proxies: the API version of each fetch request in flight, by correlation id. */
        private final Map<Integer, Short> fetchVersions = new ConcurrentHashMap<>();

        Link(Socket client, Socket upstream) {
            this.client = client;
            this.upstream = upstream;
        }

        void start() throws IOException {
            String id = name + "-" + client.getPort();
            direction(id + "-up", client, upstream, kafka ? frames(client, true) : chunks(client));
            direction(id + "-down", upstream, client, kafka ? frames(upstream, false) : chunks(upstream));
        }

        /**
         * Starts one direction: a reader thread that queues what arrives (at most {@link #QUEUED_CHUNKS}, then TCP's own
         * buffers fill) and a writer thread that forwards it when the mode lets it. Two threads, so that a delay is a
         * latency: data read while earlier data waits is not held back further, as on a long link.
         */
        private void direction(String id, Socket from, Socket to, ChunkReader reader) throws IOException {
            BlockingQueue<Chunk> queue = new ArrayBlockingQueue<>(kafka ? QUEUED_FRAMES : QUEUED_CHUNKS);
            OutputStream out = new BufferedOutputStream(to.getOutputStream(), BUFFER_SIZE);
            daemon("proxy-" + id + "-read", () -> {
                try {
                    byte[] bytes;
                    while ((bytes = reader.read()) != null && enqueue(queue, new Chunk(bytes, System.nanoTime()))) {
                        // next
                    }
                    // Whatever was read still goes out (the peer sees a prefix), then the pair closes.
                    enqueue(queue, new Chunk(null, 0));
                } catch (IOException e) {
                    // Either side closed or reset the connection (EOFException included).
                    enqueue(queue, new Chunk(null, 0));
                }
            }).start();
            daemon("proxy-" + id + "-write", () -> {
                try {
                    while (!closed.get()) {
                        Chunk chunk = queue.poll(POLL_MS, TimeUnit.MILLISECONDS);
                        if (chunk == null) {
                            continue;
                        }
                        if (chunk.bytes() == null) {
                            break;
                        }
                        awaitForwarding(this, chunk);
                        out.write(chunk.bytes());
                        if (queue.isEmpty()) {
                            out.flush();
                        }
                        forwardedBytes.addAndGet(chunk.bytes().length);
                    }
                    out.flush();
                } catch (IOException | InterruptedException e) {
                    // The connection was closed or reset.
                } finally {
                    close(false);
                }
            }).start();
        }

        /** Waits for room in the queue; false if the link closed meanwhile. */
        private boolean enqueue(BlockingQueue<Chunk> queue, Chunk chunk) {
            try {
                while (!queue.offer(chunk, POLL_MS, TimeUnit.MILLISECONDS)) {
                    if (closed.get()) {
                        return false;
                    }
                }
                return true;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }

        /** Reads what arrives, as it arrives. */
        private ChunkReader chunks(Socket from) throws IOException {
            InputStream in = from.getInputStream();
            byte[] buffer = new byte[BUFFER_SIZE];
            return () -> {
                int n = in.read(buffer);
                return n < 0 ? null : Arrays.copyOf(buffer, n);
            };
        }

        /**
         * Reads size-delimited frames: requests (noting the version of each fetch), or responses (corrupting a fetch
         * response's records of the {@link #corrupted} partition).
         */
        private ChunkReader frames(Socket from, boolean requests) throws IOException {
            DataInputStream in = new DataInputStream(new BufferedInputStream(from.getInputStream(), BUFFER_SIZE));
            return () -> {
                int size;
                try {
                    size = in.readInt();
                } catch (EOFException e) {
                    return null;
                }
                byte[] frame = new byte[4 + size];
                ByteBuffer buffer = ByteBuffer.wrap(frame);
                buffer.putInt(size);
                in.readFully(frame, 4, size);
                ByteBuffer body = buffer.slice(4, size);
                if (requests) {
                    short apiKey = size >= 2 ? body.getShort(0) : -1;
                    if (ApiKeys.hasId(apiKey)) {
                        requestsSent.computeIfAbsent(ApiKeys.forId(apiKey), api -> new LongAdder()).increment();
                    }
                    if (size >= 8 && apiKey == ApiKeys.FETCH.id) {
                        fetchVersions.put(body.getInt(4), body.getShort(2));
                    }
                } else if (size >= 4) {
                    Short version = fetchVersions.remove(body.getInt(0));
                    FetchCorruption.Target target = corrupted;
                    if (version != null && target != null) {
                        FetchCorruption.corrupt(body, version, target).ifPresent(offset -> {
                            corruptedResponses.incrementAndGet();
                            corruptedOffsets.add(offset);
                        });
                    }
                }
                return frame;
            };
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
