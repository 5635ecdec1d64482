package dev.idemkit.benchmarks;

import dev.idemkit.testsupport.Processes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A PostgreSQL server of the profile's own: {@code initdb} into a fresh directory, started on a free port with
 * {@code pg_stat_statements} preloaded and I/O and WAL timing on, every other setting the server's default (the
 * machine's server also runs on the defaults: 128 MB shared buffers, fsync and synchronous commit on). Loading
 * {@code pg_stat_statements} needs a restart with {@code shared_preload_libraries}, which the machine's server must not
 * get from a benchmark; this one is stopped and deleted by {@link #close()}. The same binaries as the machine's server
 * ({@code initdb} and {@code pg_ctl} on the PATH); as root, they run as the {@code postgres} user.
 */
final class ProfilingPostgres implements AutoCloseable {
    private static final Duration PATIENCE = Duration.ofSeconds(60);
    private final Path dir;
    private final int port;

    private ProfilingPostgres(Path dir, int port) {
        this.dir = dir;
        this.port = port;
    }

    /** Whether {@code initdb} and {@code pg_ctl} are on the PATH. */
    static boolean available() {
        return Processes.onPath("initdb") && Processes.onPath("pg_ctl");
    }

    static ProfilingPostgres start() throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("idemkit-profile-pg-");
        ProfilingPostgres pg = new ProfilingPostgres(dir, Processes.freePort());
        try {
            if (root()) {
                Processes.run("chown", "postgres:postgres", dir.toString());
            }
            pg.run("initdb", "-D", dir.resolve("data").toString(), "-U", "postgres", "--auth=trust", "--no-sync");
            pg.run("pg_ctl", "-D", dir.resolve("data").toString(), "-l", dir.resolve("server.log").toString(), "-w",
                    "-t", Long.toString(PATIENCE.toSeconds()), "-o", String.join(" ", "-p", Integer.toString(pg.port),
                            "-k", dir.toString(), "-c", "listen_addresses=127.0.0.1",
                            "-c", "shared_preload_libraries=pg_stat_statements", "-c", "pg_stat_statements.track=all",
                            "-c", "track_io_timing=on", "-c", "track_wal_io_timing=on"), "start");
            Processes.awaitPort(pg.port, PATIENCE);
            return pg;
        } catch (IOException | InterruptedException | RuntimeException e) {
            pg.close();
            throw e;
        }
    }

    String url() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
    }

    int port() {
        return port;
    }

    /** Runs a command as the server's owner (the {@code postgres} user when this JVM is root). */
    String run(String... command) throws IOException, InterruptedException {
        List<String> full = new ArrayList<>();
        if (root()) {
            full.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        full.addAll(List.of(command));
        return Processes.run(Map.of(), full);
    }

    private static boolean root() {
        return "root".equals(System.getProperty("user.name"));
    }

    @Override
    public void close() {
        try {
            if (Files.exists(dir.resolve("data/postmaster.pid"))) {
                run("pg_ctl", "-D", dir.resolve("data").toString(), "-m", "fast", "-w", "stop");
            }
        } catch (IOException | InterruptedException e) {
            System.err.println("could not stop the profile's PostgreSQL in " + dir + ": " + e.getMessage());
        } finally {
            Processes.deleteTree(dir);
        }
    }
}
