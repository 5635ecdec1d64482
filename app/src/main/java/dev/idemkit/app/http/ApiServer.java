package dev.idemkit.app.http;

import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/** The JDK's HTTP server serving one handler (the {@link PaymentsApi}) on 128 threads; closes within seconds. */
public final class ApiServer implements AutoCloseable {
    static {
        // The JDK server leaves Nagle's algorithm on by default: with delayed ACKs every small response then
        // waits ~40 ms. Read once, when the server classes load, so it is set before the first server starts.
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
    }

    private final HttpServer server;
    private final ExecutorService executor;

    private ApiServer(HttpServer server, ExecutorService executor) {
        this.server = server;
        this.executor = executor;
    }

    /**
     * Binds and starts (port 0 picks a free port).
     *
     * @throws IOException when the address is in use or cannot be bound
     */
    public static ApiServer start(InetSocketAddress address, HttpHandler handler) throws IOException {
        HttpServer server = HttpServer.create(address, 512);
        ExecutorService executor = Executors.newFixedThreadPool(128, r -> {
            Thread t = new Thread(r, "idemkit-http");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext("/", handler);
        server.start();
        return new ApiServer(server, executor);
    }

    public int port() {
        return server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(1);
        executor.shutdown();
        try {
            executor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
