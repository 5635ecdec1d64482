package dev.idemkit.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

/**
 * CPU time spent by the processes a benchmark runs against, from {@code /proc} (Linux only; elsewhere every reading is
 * zero and {@link #available()} says so): the broker ({@code beam.smp}), PostgreSQL (every {@code postgres} process:
 * the backends, the WAL writer, the checkpointer) and this JVM. A path's CPU per message, beside its throughput, says
 * whether a ratio is bound by the machine's cores (both cores busy, the cost per message higher) or by waiting (cores
 * idle): the profile a target that is not met has to show.
 */
public final class CpuMeter {
    /** Clock ticks per second of {@code /proc/PID/stat}'s utime and stime (USER_HZ: 100 on Linux). */
    private static final double TICKS_PER_SECOND = 100.0;
    private static final String[] GROUPS = {"broker", "postgres", "benchmark JVM"};

    private final long selfPid = ProcessHandle.current().pid();

    /**
     * CPU seconds per process group since boot, the whole machine's busy CPU seconds (every process, the kernel's
     * interrupts and network processing included), and the wall clock at the reading.
     */
    public record Reading(Map<String, Double> seconds, double machineBusy, long nanoTime) {
        /** What was spent between {@code earlier} and this reading, per {@code messages}. */
        public Spent since(Reading earlier, long messages) {
            Map<String, Double> used = new LinkedHashMap<>();
            for (String g : GROUPS) {
                used.put(g, seconds.getOrDefault(g, 0.0) - earlier.seconds.getOrDefault(g, 0.0));
            }
            return new Spent(used, machineBusy - earlier.machineBusy, (nanoTime - earlier.nanoTime) / 1e9, messages);
        }
    }

    /** CPU seconds per group and of the whole machine over {@code wallSeconds} for {@code messages}. */
    public record Spent(Map<String, Double> seconds, double machineSeconds, double wallSeconds, long messages) {
        /** Cores the whole machine kept busy on average: near the core count, the machine was the bound. */
        public double machineCoresBusy() {
            return machineSeconds / Math.max(1e-9, wallSeconds);
        }

        public double total() {
            return seconds.values().stream().mapToDouble(Double::doubleValue).sum();
        }

        /** Microseconds of CPU per message, all groups. */
        public double microsPerMessage() {
            return total() * 1e6 / Math.max(1, messages);
        }

        /** Cores busy on average (of the machine's {@code Runtime.availableProcessors()}). */
        public double coresBusy() {
            return total() / Math.max(1e-9, wallSeconds);
        }

        /** "broker 21 / postgres 9 / JVM 14 µs", CPU per message by group. */
        public String perMessage() {
            StringBuilder b = new StringBuilder();
            for (Map.Entry<String, Double> e : seconds.entrySet()) {
                if (b.length() > 0) {
                    b.append(" / ");
                }
                b.append(e.getKey().replace("benchmark ", "")).append(' ')
                        .append(String.format(Locale.ROOT, "%.0f", e.getValue() * 1e6 / Math.max(1, messages)));
            }
            return b.append(" µs").toString();
        }
    }

    public boolean available() {
        return Files.isReadable(Path.of("/proc/self/stat"));
    }

    public Reading read() {
        Map<String, Double> seconds = new LinkedHashMap<>();
        for (String g : GROUPS) {
            seconds.put(g, 0.0);
        }
        if (available()) {
            try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
                procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).forEach(p -> {
                    String group = group(p);
                    if (group != null) {
                        // PostgreSQL's backends come and go with their connections (pgbench's, a pool's): an exited
                        // one's time is in its parent's (the postmaster's) reaped-children time, so count that too
                        seconds.merge(group, ticks(p, group.equals("postgres")) / TICKS_PER_SECOND, Double::sum);
                    }
                });
            } catch (IOException e) {
                throw new IllegalStateException("cannot list /proc", e);
            }
        }
        return new Reading(seconds, machineBusy(), System.nanoTime());
    }

    /**
     * This JVM's CPU seconds since it started per thread name (digits folded to {@code N}, so that a pool's threads add
     * up), user and kernel apart: {@code [user, kernel]}. Threads that exited are not counted.
     */
    public Map<String, double[]> jvmThreads() {
        Map<String, double[]> out = new java.util.TreeMap<>();
        if (!available()) {
            return out;
        }
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            tasks.forEach(t -> {
                String name = comm(t);
                try {
                    String stat = Files.readString(t.resolve("stat"));
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    double[] v = out.computeIfAbsent(name == null ? "?" : name.replaceAll("[0-9]+", "N"), k -> new double[2]);
                    v[0] += Long.parseLong(f[11]) / TICKS_PER_SECOND;
                    v[1] += Long.parseLong(f[12]) / TICKS_PER_SECOND;
                } catch (IOException | RuntimeException e) {
                    // the thread exited between the listing and the reading
                }
            });
        } catch (IOException e) {
            throw new IllegalStateException("cannot list /proc/self/task", e);
        }
        return out;
    }

    /**
     * "name 12+3 µs; ..." : what each thread group spent between two {@link #jvmThreads()} readings per message, user +
     * kernel, the {@code top} largest, with the total of all.
     */
    public static String threadsPerMessage(Map<String, double[]> before, Map<String, double[]> after, long messages,
            int top) {
        Map<String, double[]> spent = new LinkedHashMap<>();
        after.forEach((k, v) -> {
            double[] b = before.getOrDefault(k, new double[2]);
            spent.put(k, new double[] {v[0] - b[0], v[1] - b[1]});
        });
        double scale = 1e6 / Math.max(1, messages);
        double user = spent.values().stream().mapToDouble(v -> v[0]).sum();
        double kernel = spent.values().stream().mapToDouble(v -> v[1]).sum();
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "all %.0f user + %.0f kernel µs", user * scale,
                kernel * scale));
        spent.entrySet().stream().sorted((x, y) -> Double.compare(y.getValue()[0] + y.getValue()[1],
                x.getValue()[0] + x.getValue()[1])).limit(top).forEach(e -> b.append(String.format(Locale.ROOT,
                "; %s %.0f+%.0f", e.getKey(), e.getValue()[0] * scale, e.getValue()[1] * scale)));
        return b.toString();
    }

    /** Busy CPU seconds of the whole machine since boot: {@code /proc/stat}'s cpu line less idle and iowait. */
    private double machineBusy() {
        if (!available()) {
            return 0;
        }
        try {
            String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            long all = 0;
            for (int i = 1; i < Math.min(f.length, 9); i++) { // user nice system idle iowait irq softirq steal
                all += Long.parseLong(f[i]);
            }
            return (all - Long.parseLong(f[4]) - Long.parseLong(f[5])) / TICKS_PER_SECOND;
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    private String group(Path proc) {
        if (Long.parseLong(proc.getFileName().toString()) == selfPid) {
            return "benchmark JVM";
        }
        String comm = comm(proc);
        if (comm == null) {
            return null;
        }
        if (comm.equals("beam.smp")) {
            return "broker";
        }
        return comm.startsWith("postgres") ? "postgres" : null;
    }

    private static String comm(Path proc) {
        try {
            return Files.readString(proc.resolve("comm")).strip();
        } catch (IOException e) {
            return null; // the process exited
        }
    }

    /**
     * utime + stime of the process (fields 14 and 15 of its stat line, after the command in parentheses), and with
     * {@code reaped} its exited children's (cutime + cstime, fields 16 and 17).
     */
    private static long ticks(Path proc, boolean reaped) {
        try {
            String stat = Files.readString(proc.resolve("stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(f[11]) + Long.parseLong(f[12])
                    + (reaped ? Long.parseLong(f[13]) + Long.parseLong(f[14]) : 0);
        } catch (IOException | RuntimeException e) {
            return 0; // the process exited between the listing and the reading
        }
    }
}
