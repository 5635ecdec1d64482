package dev.idemkit.testsupport;

import java.time.Duration;

/**
 * The same SIGKILL for every consuming process compared (the peers suites of the benchmarks): a process drains a
 * stream and is SIGKILLed from outside once a further share of the work is done ({@code kills} times: after 1/(k+1),
 * 2/(k+1), ... of {@code total}), restarted each time; a last process drains the rest and is stopped with SIGTERM once
 * the source is empty and the progress stayed the same for {@code quiet}. Where in its work a kill lands is chance, as
 * in production; the caller counts what was lost or applied twice afterwards.
 */
public final class MidStreamKills {
    /** Starts a consuming process and returns it once it consumes (its {@code READY}). */
    @FunctionalInterface
    public interface Starter {
        ChildJvm start() throws Exception;
    }

    /** A number read from outside the process: work done, or work left in the source. */
    @FunctionalInterface
    public interface Probe {
        long read() throws Exception;
    }

    private MidStreamKills() {}

    /**
     * Runs the kills and the last drain; returns the seconds it all took.
     *
     * @param progress work done so far (credits applied), read every few milliseconds
     * @param left work still waiting in the source (messages ready in the queue)
     * @param limit for each step: a kill's target not reached, or the last drain not quiet, within it is an error
     */
    public static double run(Starter starter, Probe progress, Probe left, long total, int kills, Duration quiet,
            Duration limit) throws Exception {
        long began = System.nanoTime();
        for (int k = 0; k < kills; k++) {
            try (ChildJvm child = starter.start()) {
                long target = total * (k + 1) / (kills + 1);
                long deadline = System.nanoTime() + limit.toNanos();
                while (progress.read() < target) {
                    if (System.nanoTime() > deadline || !child.alive()) {
                        throw new IllegalStateException(target + " of " + total + " not reached before kill "
                                + (k + 1) + "; log: " + child.log());
                    }
                    Thread.sleep(5);
                }
                child.kill();
            }
        }
        try (ChildJvm child = starter.start()) {
            long last = -1;
            long stableSince = System.nanoTime();
            long deadline = System.nanoTime() + limit.toNanos();
            while (true) {
                long now = progress.read();
                if (now != last) {
                    last = now;
                    stableSince = System.nanoTime();
                } else if (System.nanoTime() - stableSince > quiet.toNanos() && left.read() == 0) {
                    break;
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the last process did not finish within " + limit + "; log: "
                            + child.log());
                }
                Thread.sleep(50);
            }
            child.terminate();
        }
        return (System.nanoTime() - began) / 1e9;
    }

    /** The class path of the running JVM: its class loaders' (e.g. {@code exec:java}'s), else {@code java.class.path}. */
    public static String classpath(Class<?> anchor) {
        java.util.List<String> entries = new java.util.ArrayList<>();
        for (ClassLoader cl = anchor.getClassLoader(); cl != null; cl = cl.getParent()) {
            if (cl instanceof java.net.URLClassLoader u) {
                for (java.net.URL url : u.getURLs()) {
                    try {
                        entries.add(java.nio.file.Path.of(url.toURI()).toString());
                    } catch (java.net.URISyntaxException e) {
                        throw new IllegalStateException(e);
                    }
                }
            }
        }
        return entries.isEmpty() ? System.getProperty("java.class.path")
                : String.join(java.io.File.pathSeparator, entries);
    }

    /**
     * Starts {@code mainClass} in a JVM of its own on {@code classpath} (its log {@code target/peer-logs/<logName>}) and
     * returns it once it printed {@code READY}; one that does not within {@code patience} is stopped, and the error names
     * its log.
     */
    public static ChildJvm startReady(String mainClass, String classpath, String logName, java.util.List<String> args,
            Duration patience) throws Exception {
        ChildJvm child = ChildJvm.of(mainClass).classpath(classpath)
                .log(java.nio.file.Path.of("target", "peer-logs"), logName).args(args).start();
        if (child.awaitLine("READY", patience).isEmpty()) {
            child.close();
            throw new IllegalStateException(mainClass + " (" + logName + ") did not start; log: " + child.log());
        }
        return child;
    }
}
