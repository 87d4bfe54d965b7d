package io.clustermirror.testsupport;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A peer that claims to be a Kafka broker and answers the first request on each connection (a client's ApiVersions)
 * with a response size of its choosing and nothing after it: a hostile or broken source. It counts the connections it
 * accepts and those the client closed after reading the size, so that a test sees a client give up a connection
 * (rather than wait for, or allocate, what was announced) and come back.
 */
public final class HostilePeer implements AutoCloseable {
    private final ServerSocket server;
    private final int announcedSize;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final AtomicInteger accepted = new AtomicInteger();
    private final AtomicInteger closedByClient = new AtomicInteger();
    private final Thread acceptor;

    private HostilePeer(ServerSocket server, int announcedSize) {
        this.server = server;
        this.announcedSize = announcedSize;
        this.acceptor = new Thread(this::accept, "hostile-peer-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** A peer on a free port of 127.0.0.1 that announces {@code announcedSize} bytes in answer to every first request. */
    public static HostilePeer announcing(int announcedSize) throws IOException {
        return new HostilePeer(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()), announcedSize);
    }

    /** {@code host:port}, as bootstrap.servers takes it. */
    public String bootstrap() {
        InetSocketAddress address = (InetSocketAddress) server.getLocalSocketAddress();
        return address.getHostString() + ":" + address.getPort();
    }

    public int acceptedConnections() {
        return accepted.get();
    }

    /** Connections the client closed after it had read the announced size (and before it sent anything else). */
    public int connectionsClosedByClient() {
        return closedByClient.get();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket socket = server.accept();
                accepted.incrementAndGet();
                open.add(socket);
                Thread t = new Thread(() -> answer(socket), "hostile-peer-connection-" + socket.getPort());
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void answer(Socket socket) {
        boolean answered = false;
        try (socket) {
            DataInputStream in = new DataInputStream(socket.getInputStream());
            in.readFully(new byte[in.readInt()]);
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            out.writeInt(announcedSize);
            out.flush();
            answered = true;
            if (in.read() < 0) {
                closedByClient.incrementAndGet();
            }
        } catch (SocketException e) {
            // A reset by the client, or the peer closing: a client that resets after the size also gave the connection up.
            if (answered && !server.isClosed()) {
                closedByClient.incrementAndGet();
            }
        } catch (IOException e) {
            // The client went away before its first request was answered: not counted.
        } finally {
            open.remove(socket);
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket s : open) {
            s.close();
        }
        try {
            acceptor.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
