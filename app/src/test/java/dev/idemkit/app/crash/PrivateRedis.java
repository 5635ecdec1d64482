package dev.idemkit.app.crash;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A redis-server of the test's own, on a free port, in a fresh directory, with an append-only file fsynced on every
 * write: restarting it ({@code redis-cli shutdown nosave}, then starting it again on the same directory) keeps every
 * key. The machine's Redis is never touched.
 */
final class PrivateRedis implements AutoCloseable {
    private final int port;
    private final Path dir;

    private PrivateRedis(int port, Path dir) {
        this.port = port;
        this.dir = dir;
    }

    static PrivateRedis start() throws IOException, InterruptedException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        PrivateRedis redis = new PrivateRedis(port, Files.createTempDirectory("idemkit-redis-"));
        redis.launch();
        return redis;
    }

    String url() {
        return "redis://127.0.0.1:" + port;
    }

    private void launch() throws IOException, InterruptedException {
        EngineFaultsIT.run("redis-server", "--daemonize", "yes", "--bind", "127.0.0.1", "--port", Integer.toString(port),
                "--dir", dir.toString(), "--appendonly", "yes", "--appendfsync", "always", "--save", "",
                "--logfile", dir.resolve("redis.log").toString());
        EngineFaultsIT.awaitPort(port);
    }

    /** {@code redis-cli shutdown nosave}, then the same server again on the same directory (its AOF replayed). */
    void restart() throws IOException, InterruptedException {
        shutdown();
        launch();
    }

    private void shutdown() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("redis-cli", "-p", Integer.toString(port), "shutdown", "nosave")
                .redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        p.waitFor();
        for (int i = 0; i < 100; i++) {
            try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
                Thread.sleep(100);
            } catch (IOException gone) {
                return;
            }
        }
    }

    @Override
    public void close() throws Exception {
        shutdown();
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
    }
}
