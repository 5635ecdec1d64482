package dev.idemkit.testsupport;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A JVM in a process of its own, started from this test's class path (or another), running a main class: its
 * standard output is read line by line (a test's protocol with it, such as {@code READY}), its standard error goes to
 * a log file. {@link #kill()} is a real SIGKILL sent from outside the process ({@code destroyForcibly} on Linux),
 * {@link #signalTerm()} and {@link #terminate()} a SIGTERM. Closing it SIGKILLs what is still running, so a failed
 * test leaves no process behind.
 */
public final class ChildJvm implements AutoCloseable {
    /** The exit status of a JVM killed by SIGKILL: 128 + 9. */
    public static final int SIGKILLED = 137;
    /**
     * Options every child gets: a small heap and a JIT that starts fast (children live seconds, not hours), and no
     * bytecode verification of the class path's classes (the project's own and Maven's jars; the JDK's are not verified
     * either): 13 % less CPU per child start, measured on {@code idemkit outbox list} (3.5 s to 3.0 s), and the suite
     * starts more than a hundred children.
     */
    public static final List<String> FAST_START = List.of("-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
            "-Xshare:auto", "-XX:+UnlockDiagnosticVMOptions", "-XX:-BytecodeVerificationRemote");

    private final Process process;
    private final java.util.concurrent.atomic.AtomicBoolean counted = new java.util.concurrent.atomic.AtomicBoolean();
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final Path log;
    private final Thread reader;

    private ChildJvm(Process process, Path log) {
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
        }, "child-jvm-stdout-" + process.pid());
        reader.setDaemon(true);
        reader.start();
    }

    /** A child of {@code mainClass}; nothing runs before {@link Builder#start()}. */
    public static Builder of(String mainClass) {
        return new Builder(mainClass);
    }

    /** What to start. */
    public static final class Builder {
        private final String mainClass;
        private final List<String> jvmOptions = new ArrayList<>(FAST_START);
        {
            // options for every child of this run, for an experiment: -Didemkit.child.jvm="-Xlog:... -XX:..."
            String extra = System.getProperty("idemkit.child.jvm", "").strip();
            if (!extra.isEmpty()) {
                jvmOptions.addAll(List.of(extra.split("\\s+")));
            }
        }
        private final Map<String, String> properties = new LinkedHashMap<>();
        private final Map<String, String> env = new LinkedHashMap<>();
        private final List<String> args = new ArrayList<>();
        private String classpath = System.getProperty("java.class.path");
        private Path logDir = Path.of("target", "child-logs");
        private String logName;

        private Builder(String mainClass) {
            this.mainClass = mainClass;
            this.logName = mainClass.substring(mainClass.lastIndexOf('.') + 1) + "-" + Names.tag(8);
        }

        public Builder jvmOptions(String... options) {
            jvmOptions.addAll(List.of(options));
            return this;
        }

        public Builder properties(Map<String, String> props) {
            properties.putAll(props);
            return this;
        }

        /** Added to the test's own environment. */
        public Builder env(Map<String, String> vars) {
            env.putAll(vars);
            return this;
        }

        public Builder args(List<String> arguments) {
            args.addAll(arguments);
            return this;
        }

        public Builder classpath(String cp) {
            this.classpath = cp;
            return this;
        }

        /** The standard error goes to {@code <dir>/<name>.log}. */
        public Builder log(Path dir, String name) {
            this.logDir = dir;
            this.logName = name;
            return this;
        }

        public ChildJvm start() throws IOException {
            List<String> command = new ArrayList<>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            command.addAll(jvmOptions);
            properties.forEach((k, v) -> command.add("-D" + k + "=" + v));
            command.add("-cp");
            command.add(classpath);
            command.add(mainClass);
            command.addAll(args);
            Files.createDirectories(logDir);
            Path log = logDir.resolve(logName + ".log");
            ProcessBuilder builder = new ProcessBuilder(command).redirectError(log.toFile());
            builder.environment().putAll(env);
            return new ChildJvm(builder.start(), log);
        }
    }

    /** Waits for a line starting with {@code prefix}; empty when the process ended or the wait ran out first. */
    public Optional<String> awaitLine(String prefix, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() - deadline < 0) {
            String line = lines.poll(100, TimeUnit.MILLISECONDS);
            if (line != null && line.startsWith(prefix)) {
                return Optional.of(line);
            }
            if (line == null && !process.isAlive() && lines.isEmpty()) {
                reader.join(1_000); // what it printed last may still be on its way
                if (lines.isEmpty()) {
                    return Optional.empty();
                }
            }
        }
        return Optional.empty();
    }

    /** The lines not yet consumed by {@link #awaitLine}; once the process ended, up to its last line. */
    public List<String> unread() throws InterruptedException {
        if (!process.isAlive()) {
            reader.join(5_000);
        }
        List<String> out = new ArrayList<>();
        lines.drainTo(out);
        return out;
    }

    public boolean alive() {
        return process.isAlive();
    }

    public long pid() {
        return process.pid();
    }

    /** SIGTERM, without waiting. Through the process handle: {@code Process.destroy} would also close our end of its output. */
    public void signalTerm() {
        countCpu();
        process.toHandle().destroy();
    }

    /** SIGKILL, and its exit status. */
    public int kill() throws InterruptedException {
        countCpu();
        process.toHandle().destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("a SIGKILLed child did not exit within 30 s");
        }
        return process.exitValue();
    }

    /** SIGTERM and a graceful stop; the exit status (a SIGKILL and an exception after 60 s if it does not stop). */
    public int terminate() throws InterruptedException {
        countCpu();
        process.toHandle().destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
            throw new IllegalStateException("the child did not stop within 60 s of SIGTERM; log: " + log);
        }
        return process.exitValue();
    }

    /** Waits for the process to end by itself; SIGKILL and an exception when it does not within {@code timeout}. */
    public int awaitExit(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("the child did not finish within " + timeout + "; log: " + log);
        }
        return process.exitValue();
    }

    public Path log() {
        return log;
    }

    /**
     * Prints the CPU the process used so far, {@code child-jvm-cpu <log name> <ms>}, once per child: each child is a JVM
     * start, the largest cost in the suite's time budget ({@code .ci/run} sums these lines per module).
     */
    private void countCpu() {
        if (counted.compareAndSet(false, true)) {
            process.toHandle().info().totalCpuDuration().ifPresent(d -> System.out.println("child-jvm-cpu "
                    + log.getFileName() + " " + d.toMillis()));
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            countCpu();
            process.destroyForcibly();
        }
    }
}
