package dev.idemkit.domain.httpkey;

import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/** A final response kept for replay: status, the headers that matter, and the body byte for byte. */
public record StoredResponse(int status, Map<String, String> headers, byte[] body) {
    public StoredResponse {
        if (status < 100 || status > 599) {
            throw new IllegalArgumentException("HTTP status must lie in 100..599, got " + status);
        }
        headers = Map.copyOf(Objects.requireNonNull(headers, "headers"));
        body = Objects.requireNonNull(body, "body").clone();
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
