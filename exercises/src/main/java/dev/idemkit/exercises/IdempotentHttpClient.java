package dev.idemkit.exercises;

import dev.idemkit.domain.httpkey.IdempotencyKey;
import dev.idemkit.domain.retry.Backoff;
import dev.idemkit.domain.retry.RandomSource;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * An HTTP client that retries safely: the Idempotency-Key is generated BEFORE the first attempt and
 * reused on every retry, so a timeout or a dropped response never turns into a second charge.
 *
 * <p>Retries (with the domain's backoff and jitter) on connection failures and timeouts, 5xx, 409
 * (the first is still running) and 429. GET, HEAD, PUT, DELETE and OPTIONS are idempotent by
 * definition and retried as they are; POST and PATCH are retried only when they carry a key — which
 * this client always gives them unless told not to.
 */
public final class IdempotentHttpClient {
    private static final Set<String> IDEMPOTENT_METHODS = Set.of("GET", "HEAD", "PUT", "DELETE", "OPTIONS");

    /** Attempts (from 1), backoff between them, and the per-attempt timeout. */
    public record Settings(int maxAttempts, Backoff backoff, Duration attemptTimeout) {
        public Settings {
            if (maxAttempts < 1) {
                throw new IllegalArgumentException("maxAttempts must be at least 1, got " + maxAttempts);
            }
            Objects.requireNonNull(backoff, "backoff");
            Objects.requireNonNull(attemptTimeout, "attemptTimeout");
        }

        public static Settings defaults() {
            return new Settings(5, Backoff.exponential(Duration.ofMillis(100), Duration.ofSeconds(5),
                    dev.idemkit.domain.retry.Jitter.FULL), Duration.ofSeconds(10));
        }
    }

    /** The final answer and how many attempts it took. */
    public record Result(HttpResponse<byte[]> response, int attempts, Optional<IdempotencyKey> key) {}

    private final HttpClient http;
    private final Settings settings;
    private final RandomSource random;
    private final Supplier<String> keys;
    private final AtomicLong retries = new AtomicLong();

    public IdempotentHttpClient(HttpClient http, Settings settings, RandomSource random) {
        this(http, settings, random, () -> UUID.randomUUID().toString());
    }

    public IdempotentHttpClient(HttpClient http, Settings settings, RandomSource random, Supplier<String> keys) {
        this.http = Objects.requireNonNull(http, "http");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.random = Objects.requireNonNull(random, "random");
        this.keys = Objects.requireNonNull(keys, "keys");
    }

    /** Sends with a fresh key for POST/PATCH (generated now, before the first attempt). */
    public Result send(String method, URI uri, byte[] body, Map<String, String> headers)
            throws IOException, InterruptedException {
        String m = method.toUpperCase(java.util.Locale.ROOT);
        Optional<IdempotencyKey> key = IDEMPOTENT_METHODS.contains(m) ? Optional.empty()
                : Optional.of(new IdempotencyKey(keys.get()));
        return send(m, uri, body, headers, key);
    }

    /**
     * Sends with the given key (or none). A POST/PATCH without a key is sent exactly once: retrying it
     * could run it twice.
     */
    public Result send(String method, URI uri, byte[] body, Map<String, String> headers, Optional<IdempotencyKey> key)
            throws IOException, InterruptedException {
        String m = method.toUpperCase(java.util.Locale.ROOT);
        boolean retryable = IDEMPOTENT_METHODS.contains(m) || key.isPresent();
        int maxAttempts = retryable ? settings.maxAttempts() : 1;
        HttpRequest.Builder builder = HttpRequest.newBuilder(uri).timeout(settings.attemptTimeout())
                .method(m, body.length == 0 ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofByteArray(body));
        headers.forEach(builder::header);
        key.ifPresent(k -> builder.header("Idempotency-Key", k.value()));
        HttpRequest request = builder.build();
        for (int attempt = 1; ; attempt++) {
            try {
                HttpResponse<byte[]> response = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
                if (!retryableStatus(response.statusCode()) || attempt >= maxAttempts) {
                    return new Result(response, attempt, key);
                }
            } catch (IOException e) {
                if (attempt >= maxAttempts) {
                    throw e;
                }
            }
            retries.incrementAndGet();
            Thread.sleep(settings.backoff().delay(attempt - 1, random).toMillis());
        }
    }

    /** Retries made so far by this client, over all requests. */
    public long retries() {
        return retries.get();
    }

    private static boolean retryableStatus(int status) {
        return status >= 500 || status == 409 || status == 429;
    }
}
