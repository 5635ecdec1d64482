package dev.idemkit.domain.httpkey;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * A response: status, the headers that matter, and the body byte for byte. What an Idempotency-Key keeps for replay
 * is {@link #storable()}: without credential headers ({@link #NEVER_STORED}), so a cookie or challenge meant for the
 * first request's caller is never stored, and so never replayed to whoever retries with the key.
 */
public record StoredResponse(int status, Map<String, String> headers, byte[] body) {
    /** Response headers never kept (compared without case): they carry or ask for credentials. */
    public static final Set<String> NEVER_STORED = Set.of("set-cookie", "set-cookie2", "cookie", "authorization",
            "proxy-authorization", "www-authenticate", "proxy-authenticate", "authentication-info",
            "proxy-authentication-info");

    public StoredResponse {
        if (status < 100 || status > 599) {
            throw new IllegalArgumentException("HTTP status must lie in 100..599, got " + status);
        }
        headers = Map.copyOf(Objects.requireNonNull(headers, "headers"));
        body = Objects.requireNonNull(body, "body").clone();
    }

    /** This response without its credential headers: what may be stored and replayed. */
    public StoredResponse storable() {
        Map<String, String> kept = new LinkedHashMap<>();
        headers.forEach((name, value) -> {
            if (!NEVER_STORED.contains(name.toLowerCase(Locale.ROOT))) {
                kept.put(name, value);
            }
        });
        return kept.size() == headers.size() ? this : new StoredResponse(status, kept, body);
    }

    @Override
    public byte[] body() {
        return body.clone();
    }

    /** A 5xx is not a final answer: the key is released so that the client's retry can run. */
    public boolean isServerError() {
        return status >= 500;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StoredResponse r && status == r.status && headers.equals(r.headers)
                && Arrays.equals(body, r.body);
    }

    @Override
    public int hashCode() {
        return Objects.hash(status, headers, Arrays.hashCode(body));
    }

    @Override
    public String toString() {
        return "StoredResponse[status=" + status + ", headers=" + new TreeMap<>(headers) + ", bytes=" + body.length + "]";
    }
}
