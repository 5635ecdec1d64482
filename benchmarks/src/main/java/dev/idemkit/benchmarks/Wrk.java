package dev.idemkit.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code wrk} (Debian's package) as the HTTP load generator, a process of its own: the same POST with the same
 * Idempotency-Key on {@code clients} connections over 2 threads, every response checked by its Lua script (status,
 * byte-identical body, {@code Idempotent-Replayed}); requests, p50, p99 and wrong answers come back on one line the
 * script prints. The script holds the benchmark's throwaway API key and is deleted after the run.
 */
final class Wrk {
    private static final Pattern RESULT = Pattern.compile(
            "IDEMKIT requests=(\\d+) micros=(\\d+) p50=(\\d+) p99=(\\d+) wrong=(\\d+) errors=(\\d+)");
    private final String apiKey;
    private final String idempotencyKey;
    private final byte[] body;
    private final int status;
    private final byte[] expected;

    Wrk(String apiKey, String idempotencyKey, byte[] body, int status, byte[] expected) {
        this.apiKey = apiKey;
        this.idempotencyKey = idempotencyKey;
        this.body = body.clone();
        this.status = status;
        this.expected = expected.clone();
    }

    static boolean available() {
        try {
            Process p = new ProcessBuilder("wrk", "--version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            p.waitFor(5, TimeUnit.SECONDS);
            return true;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    HttpReplays.Run run(String what, String url, int clients, Duration duration) throws IOException, InterruptedException {
        Path script = Files.createTempFile("idemkit-bench-wrk", ".lua");
        try {
            Files.writeString(script, script(), StandardCharsets.UTF_8);
            int threads = Math.min(2, clients);
            List<String> command = List.of("wrk", "-t" + threads, "-c" + clients, "-d" + duration.toSeconds() + "s",
                    "--timeout", "10s", "-s", script.toString(), url);
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(duration.toSeconds() + 30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IllegalStateException("wrk failed: " + out);
            }
            Matcher m = RESULT.matcher(out);
            if (!m.find()) {
                throw new IllegalStateException("wrk printed no result line: " + out);
            }
            long errors = Long.parseLong(m.group(6));
            return new HttpReplays.Run(what, String.format(Locale.ROOT, "wrk -t%d -c%d", threads, clients),
                    Long.parseLong(m.group(1)), Long.parseLong(m.group(2)) / 1e6, Long.parseLong(m.group(3)),
                    Long.parseLong(m.group(4)), Long.parseLong(m.group(5)) + errors);
        } finally {
            Files.deleteIfExists(script);
        }
    }

    private String script() {
        return """
                wrk.method = "POST"
                wrk.body = %s
                wrk.headers["Authorization"] = "Bearer %s"
                wrk.headers["Idempotency-Key"] = "%s"
                wrk.headers["Content-Type"] = "application/json"
                local expected = %s
                local threads = {}
                function setup(thread) table.insert(threads, thread) end
                function init(args) wrong = 0 end
                function response(status, headers, body)
                  local replayed = false
                  for k, v in pairs(headers) do
                    if string.lower(k) == "idempotent-replayed" and v == "true" then replayed = true end
                  end
                  if status ~= %d or body ~= expected or not replayed then wrong = wrong + 1 end
                end
                function done(summary, latency, requests)
                  local w = 0
                  for _, t in ipairs(threads) do w = w + t:get("wrong") end
                  local e = summary.errors
                  io.write(string.format("IDEMKIT requests=%%d micros=%%d p50=%%d p99=%%d wrong=%%d errors=%%d\\n",
                    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), w,
                    e.connect + e.read + e.write + e.timeout))
                end
                """.formatted(luaString(body), apiKey, idempotencyKey, luaString(expected), status);
    }

    /** A Lua long string holding exactly these bytes (UTF-8 JSON here; the level is picked so that it cannot end early). */
    private static String luaString(byte[] bytes) {
        String s = new String(bytes, StandardCharsets.UTF_8);
        String eq = "=";
        while (s.contains("]" + eq + "]")) {
            eq += "=";
        }
        // a long string drops a first newline: start with one of our own
        return "[" + eq + "[\n" + s + "]" + eq + "]";
    }
}
