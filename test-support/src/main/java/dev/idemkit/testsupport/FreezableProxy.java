package dev.idemkit.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on a free loopback port that forwards every connection to one address, and can make one of them a
 * silently dead path: {@link #freeze} keeps both sockets open and reads what either side sends, but forwards nothing,
 * as a network that drops packets without a reset would. Neither side learns of it until its own timeouts say so
 * (AMQP: two missed heartbeats). {@link #cut} closes one connection's sockets. Thread-safe.
 */
public final class FreezableProxy implements AutoCloseable {
    private final ServerSocket server;
    private final String host;
    private final int port;
    private final List<Link> links = new CopyOnWriteArrayList<>();

    private FreezableProxy(String host, int port) throws IOException {
        this.host = host;
        this.port = port;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(this::accept, "freezable-proxy-accept-" + server.getLocalPort());
        accept.setDaemon(true);
        accept.start();
    }

    /** A proxy to {@code host:port}, accepting on a free loopback port. */
    public static FreezableProxy to(String host, int port) throws IOException {
        return new FreezableProxy(host, port);
    }

    /** The loopback port the proxy accepts on. */
    public int port() {
        return server.getLocalPort();
    }

    /** Connections accepted so far. */
    public int connections() {
        return links.size();
    }

    /** Stops forwarding on connection {@code index} (0 = the first accepted), both ways, keeping its sockets open. */
    public void freeze(int index) {
        links.get(index).frozen = true;
    }

    /** Closes connection {@code index}'s sockets: both sides see the connection end. */
    public void cut(int index) {
        links.get(index).close();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket(host, port);
                Link link = new Link(client, upstream);
                links.add(link);
                link.start(links.size() - 1);
            } catch (IOException e) {
                // closed, or the upstream refused: the client sees its connection end
            }
        }
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException e) {
            // closing anyway
        }
        links.forEach(Link::close);
    }

    private static final class Link {
        private final Socket client;
        private final Socket upstream;
        private volatile boolean frozen;

        Link(Socket client, Socket upstream) {
            this.client = client;
            this.upstream = upstream;
        }

        void start(int index) throws IOException {
            pump(client.getInputStream(), upstream.getOutputStream(), "freezable-proxy-" + index + "-up");
            pump(upstream.getInputStream(), client.getOutputStream(), "freezable-proxy-" + index + "-down");
        }

        private void pump(InputStream in, OutputStream out, String name) {
            Thread t = new Thread(() -> {
                byte[] buffer = new byte[8192];
                try {
                    for (int n; (n = in.read(buffer)) >= 0; ) {
                        if (!frozen) { // frozen: read and dropped, so the sender never notices
                            out.write(buffer, 0, n);
                            out.flush();
                        }
                    }
                } catch (IOException e) {
                    // one side closed
                }
                if (!frozen) {
                    close();
                }
            }, name);
            t.setDaemon(true);
            t.start();
        }

        void close() {
            for (Socket s : List.of(client, upstream)) {
                try {
                    s.close();
                } catch (IOException e) {
                    // closing anyway
                }
            }
        }
    }
}
