package dev.idemkit.testsupport;

import dev.idemkit.ports.contract.Eventually;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** Commands with a bound, free ports, and waiting for a port to answer. */
public final class Processes {
    private Processes() {}

    /** Runs {@code command} (at most 2 minutes); its standard output and error, or an exception with all of it. */
    public static String run(String... command) throws IOException, InterruptedException {
        return run(Map.of(), List.of(command));
    }

    /** As {@link #run(String...)}, with {@code env} added to the environment. */
    public static String run(Map<String, String> env, List<String> command) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().putAll(env);
        long began = System.nanoTime();
        Process p = pb.start();
        try {
            return collect(command, p);
        } finally {
            // each command is a process start (rabbitmqctl: an Erlang VM, about a second of CPU); .ci/run sums these
            System.out.println("command-run " + Path.of(command.get(0)).getFileName() + " "
                    + (System.nanoTime() - began) / 1_000_000);
        }
    }

    private static String collect(List<String> command, Process p) throws IOException, InterruptedException {
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException(String.join(" ", command) + " did not finish in 120 s: " + out);
        }
        if (p.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " exited " + p.exitValue() + ": " + out);
        }
        return out;
    }

    /** Whether {@code program} is an executable on the PATH. */
    public static boolean onPath(String program) {
        return Stream.of(System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator))
                .anyMatch(d -> Files.isExecutable(Path.of(d, program)));
    }

    /** A loopback port nobody listens on right now. */
    public static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException("no free loopback port", e);
        }
    }

    /** Whether something accepts a TCP connection on 127.0.0.1:{@code port}. */
    public static boolean accepts(int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Waits until 127.0.0.1:{@code port} accepts connections. */
    public static void awaitPort(int port, Duration patience) {
        Eventually.await(patience, "a server accepting connections on 127.0.0.1:" + port, () -> accepts(port));
    }

    /** Waits until nothing accepts connections on 127.0.0.1:{@code port} any more. */
    public static void awaitPortClosed(int port, Duration patience) {
        Eventually.await(patience, "nothing listening on 127.0.0.1:" + port, () -> !accepts(port));
    }

    /** Deletes {@code dir} and everything in it; what cannot be deleted is left (a temp dir left behind is harmless). */
    public static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            all.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException | java.io.UncheckedIOException e) {
            // files vanishing underneath: already deleted
        }
    }
}
