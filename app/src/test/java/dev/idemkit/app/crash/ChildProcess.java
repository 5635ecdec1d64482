package dev.idemkit.app.crash;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import net.bytebuddy.agent.ByteBuddyAgent;

/**
 * A JVM started from this test's class path running {@code mainClass}: its standard output is read line by line
 * (the protocol: {@code READY}, {@code CRASH-POINT ...}), its standard error goes to a log file under
 * {@code target/crash-logs}. {@link #kill()} is a real SIGKILL ({@code Process.destroyForcibly} on Linux), sent
 * from outside the process; {@link #terminate()} a SIGTERM.
 */
final class ChildProcess implements AutoCloseable {
    /** The exit status of a JVM killed by SIGKILL: 128 + 9. */
    static final int SIGKILLED = 137;

    private final Process process;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final Path log;
    private final Thread reader;

    private ChildProcess(Process process, Path log) {
        this.process = process;
        this.log = log;
        this.reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    lines.add(line);
                }
            } catch (IOException ignored) {
                // the process died: nothing more to read
            }
        }, "crash-child-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts {@code mainClass} with the system properties {@code props}, the test's environment plus {@code env}, and its class path. */
    static ChildProcess start(String mainClass, Map<String, String> props, Map<String, String> env, String logName)
            throws IOException {
        return start(mainClass, List.of(), props, env, logName);
    }

    /** As above, with command-line arguments. */
    static ChildProcess start(String mainClass, List<String> args, Map<String, String> props, Map<String, String> env,
            String logName) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-javaagent:" + agentJar());
        command.add("-Xmx256m");
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-XX:+UseSerialGC");
        command.add("-Xshare:auto");
        props.forEach((k, v) -> command.add("-D" + k + "=" + v));
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass);
        command.addAll(args);
        Path dir = Path.of("target", "crash-logs");
        Files.createDirectories(dir);
        Path log = dir.resolve(logName + ".log");
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(log.toFile());
        builder.environment().putAll(env);
        Process p = builder.start();
        return new ChildProcess(p, log);
    }

    private static String agentJar() {
        try {
            return new File(ByteBuddyAgent.class.getProtectionDomain().getCodeSource().getLocation().toURI()).getPath();
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Waits for a line starting with {@code prefix}; empty when the process ended or the wait ran out first. */
    Optional<String> awaitLine(String prefix, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            String line = lines.poll(100, TimeUnit.MILLISECONDS);
            if (line != null && line.startsWith(prefix)) {
                return Optional.of(line);
            }
            if (line == null && !process.isAlive() && lines.isEmpty()) {
                return Optional.empty();
            }
        }
        return Optional.empty();
    }

    /** The lines not yet consumed by {@link #awaitLine}; once the process ended, up to its last line. */
    List<String> unread() throws InterruptedException {
        if (!process.isAlive()) {
            reader.join(5_000);
        }
        List<String> out = new ArrayList<>();
        lines.drainTo(out);
        return out;
    }

    boolean alive() {
        return process.isAlive();
    }

    long pid() {
        return process.pid();
    }

    /** SIGTERM, without waiting. Through the process handle: {@code Process.destroy} would also close our end of its output. */
    void signalTerm() {
        process.toHandle().destroy();
    }

    /** SIGKILL, and its exit status. */
    int kill() throws InterruptedException {
        process.toHandle().destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("a SIGKILLed child did not exit within 30 s");
        }
        return process.exitValue();
    }

    /** SIGTERM and a graceful stop; the exit status (a SIGKILL after 60 s if it does not stop). */
    int terminate() throws InterruptedException {
        process.toHandle().destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
            throw new IllegalStateException("the child did not stop within 60 s of SIGTERM; log: " + log);
        }
        return process.exitValue();
    }

    /** Waits for the process to end by itself. */
    int awaitExit(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("the child did not finish within " + timeout + "; log: " + log);
        }
        return process.exitValue();
    }

    Path log() {
        return log;
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
        }
    }
}
