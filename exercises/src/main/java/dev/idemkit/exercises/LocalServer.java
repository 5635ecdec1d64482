package dev.idemkit.exercises;

import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/** A JDK HTTP server on a free loopback port serving one handler, with enough threads for exercise 2's 100 callers. */
final class LocalServer implements AutoCloseable {
    private final HttpServer server;
    private final ExecutorService executor;

    private LocalServer(HttpServer server, ExecutorService executor) {
        this.server = server;
        this.executor = executor;
    }

    static LocalServer start(HttpHandler handler) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 512);
        ExecutorService executor = Executors.newFixedThreadPool(128, r -> {
            Thread t = new Thread(r, "idemkit-exercise-http");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext("/", handler);
        server.start();
        return new LocalServer(server, executor);
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/");
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
        try {
            executor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
