package dev.idemkit.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * This JVM's CPU samples while a piece of work runs (JDK Flight Recorder's execution samples only: a Java thread's
 * stack every 10 ms while it runs Java code), summed up: which library the time is spent for (the first frame from the
 * top that is not the JDK's own: a socket write asked for by the PostgreSQL driver counts for the driver), which
 * methods run themselves, and which threads. The recording is written to a temporary file and deleted.
 */
final class JfrProfile {
    /** Samples by the library that asked for them, by method on top, by thread (names without their numbers). */
    record Summary(int samples, Map<String, Integer> byLibrary, Map<String, Integer> byMethod,
            Map<String, Integer> byThread) {
        List<String> lines(int top) {
            List<String> out = new ArrayList<>();
            if (samples == 0) {
                return out;
            }
            out.add(String.format(Locale.ROOT, "%,d CPU samples of this JVM (JFR, 10 ms per running thread)", samples));
            out.add("by library (first frame from the top outside the JDK): " + shares(byLibrary, 8));
            out.add("by thread: " + shares(byThread, 6));
            out.add("hottest methods (top frame): " + shares(byMethod, top));
            return out;
        }

        private String shares(Map<String, Integer> counts, int n) {
            StringBuilder b = new StringBuilder();
            counts.entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue().reversed()).limit(n)
                    .forEach(e -> b.append(b.isEmpty() ? "" : "; ").append(e.getKey()).append(' ')
                            .append(Math.round(100.0 * e.getValue() / Math.max(1, samples))).append(" %"));
            return b.toString();
        }
    }

    private JfrProfile() {}

    /** No recording (the run was not sampled). */
    static Summary none() {
        return new Summary(0, Map.of(), Map.of(), Map.of());
    }

    /** Runs {@code work} under a recording; its result and the summary. */
    static <T> Map.Entry<T, Summary> record(Callable<T> work) throws Exception {
        Path file = Files.createTempFile("idemkit-profile-", ".jfr");
        try {
            T result;
            try (Recording r = new Recording()) {
                // the execution samples only: the "profile" settings also instrument the JDK's socket and file classes
                // at start, and the recompilation that follows cost more CPU than the measured path itself
                r.enable("jdk.ExecutionSample").withPeriod(java.time.Duration.ofMillis(10));
                r.start();
                result = work.call();
                r.stop();
                r.dump(file);
            }
            return Map.entry(result, summarize(file));
        } finally {
            Files.deleteIfExists(file);
        }
    }

    private static Summary summarize(Path file) throws IOException {
        int samples = 0;
        Map<String, Integer> byLibrary = new HashMap<>();
        Map<String, Integer> byMethod = new HashMap<>();
        Map<String, Integer> byThread = new HashMap<>();
        try (RecordingFile f = new RecordingFile(file)) {
            while (f.hasMoreEvents()) {
                RecordedEvent e = f.readEvent();
                if (!e.getEventType().getName().equals("jdk.ExecutionSample") || e.getStackTrace() == null
                        || e.getStackTrace().getFrames().isEmpty()) {
                    continue;
                }
                samples++;
                List<RecordedFrame> frames = e.getStackTrace().getFrames();
                RecordedFrame top = frames.get(0);
                byMethod.merge(top.getMethod().getType().getName() + "." + top.getMethod().getName(), 1, Integer::sum);
                byLibrary.merge(library(frames), 1, Integer::sum);
                String thread = e.getThread("sampledThread") == null ? "?" : e.getThread("sampledThread").getJavaName();
                byThread.merge(thread == null ? "?" : thread.replaceAll("[0-9]+", "N"), 1, Integer::sum);
            }
        }
        return new Summary(samples, byLibrary, byMethod, byThread);
    }

    /** The library of the first frame from the top that is not the JDK's. */
    private static String library(List<RecordedFrame> frames) {
        for (RecordedFrame fr : frames) {
            String type = fr.getMethod().getType().getName();
            if (type.startsWith("java.") || type.startsWith("jdk.") || type.startsWith("sun.")
                    || type.startsWith("javax.")) {
                continue;
            }
            if (type.startsWith("org.postgresql.")) {
                return "PostgreSQL JDBC driver";
            }
            if (type.startsWith("com.rabbitmq.")) {
                return "RabbitMQ amqp-client";
            }
            if (type.startsWith("org.hibernate.") || type.startsWith("jakarta.")) {
                return "Hibernate / JPA";
            }
            if (type.startsWith("com.zaxxer.")) {
                return "HikariCP";
            }
            if (type.startsWith("com.fasterxml.")) {
                return "Jackson";
            }
            if (type.startsWith("io.opentelemetry.")) {
                return "OpenTelemetry";
            }
            if (type.startsWith("dev.idemkit.benchmarks.") || type.startsWith("dev.idemkit.adapters.postgres.Relay")) {
                return "the benchmark itself";
            }
            if (type.startsWith("dev.idemkit.")) {
                return "idemkit";
            }
            int dot = type.indexOf('.', type.indexOf('.') + 1);
            return dot > 0 ? type.substring(0, dot) : type;
        }
        return "JDK only";
    }
}
