package dev.idemkit.testsupport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A {@code redis-server} of the test's own, on a free port, in a fresh directory, with an append-only file fsynced on
 * every write: {@link #restart()} ({@code shutdown nosave}, then the same server again on the same directory) keeps
 * every key, and {@link #stop()} / {@link #start()} take it away and bring it back. The machine's Redis (which keeps
 * nothing on disk, so restarting it would wipe everyone's data) is never touched. {@link #close()} stops it and deletes
 * the directory.
 */
public final class PrivateRedis implements AutoCloseable {
    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private final int port;
    private final Path dir;

    private PrivateRedis(int port, Path dir) {
        this.port = port;
        this.dir = dir;
    }

    /** Starts one; returns once it answers. */
    public static PrivateRedis start() throws IOException, InterruptedException {
        PrivateRedis redis = new PrivateRedis(Processes.freePort(), Files.createTempDirectory("idemkit-redis-"));
        redis.launch();
        return redis;
    }

    public int port() {
        return port;
    }

    public String url() {
        return "redis://127.0.0.1:" + port;
    }

    /** Runs {@code redis-cli -p <port> args...}; its output. */
    public String cli(String... args) throws IOException, InterruptedException {
        java.util.List<String> command = new java.util.ArrayList<>(java.util.List.of("redis-cli", "-p",
                Integer.toString(port)));
        command.addAll(java.util.List.of(args));
        return Processes.run(java.util.Map.of(), command);
    }

    private void launch() throws IOException, InterruptedException {
        Processes.run("redis-server", "--daemonize", "yes", "--bind", "127.0.0.1", "--port", Integer.toString(port),
                "--dir", dir.toString(), "--appendonly", "yes", "--appendfsync", "always", "--save", "",
                "--logfile", dir.resolve("redis.log").toString());
        Processes.awaitPort(port, PATIENCE);
    }

    /** {@code shutdown nosave}, then the same server again on the same directory (its append-only file replayed). */
    public void restart() throws IOException, InterruptedException {
        stop();
        launch();
    }

    /** {@code shutdown nosave}; returns once nothing listens on its port. */
    public void stop() throws IOException, InterruptedException {
        try {
            cli("shutdown", "nosave");
        } catch (IOException e) {
            // redis-cli reports the connection the shutdown closes as an error on some versions; the port decides
        }
        Processes.awaitPortClosed(port, PATIENCE);
    }

    /** Brings a {@link #stop() stopped} server back on the same port and directory. */
    public void resume() throws IOException, InterruptedException {
        launch();
    }

    @Override
    public void close() throws IOException, InterruptedException {
        if (Processes.accepts(port)) {
            stop();
        }
        Processes.deleteTree(dir);
    }
}
