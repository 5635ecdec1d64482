package dev.idemkit.ports.service;

import dev.idemkit.domain.httpkey.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** RFC 9457 {@code application/problem+json} responses for the Idempotency-Key decisions. */
public final class Problems {
    public static final String CONTENT_TYPE = "application/problem+json";

    private Problems() {}

    public static StoredResponse badRequest(String detail) {
        return problem(400, "Bad Request", "invalid-idempotency-key", detail);
    }

    /**
     * 413: the body is larger than {@code maxBytes}, refused before it is buffered or fingerprinted; {@code setting}
     * names what raises the limit.
     */
    public static StoredResponse bodyTooLarge(long maxBytes, String setting) {
        return problem(413, "Content Too Large", "body-too-large",
                "The body exceeds " + maxBytes + " bytes (" + setting + ").");
    }

    /** 415: the body's media type is not one the endpoint reads; {@code detail} says which it takes. */
    public static StoredResponse unsupportedMediaType(String detail) {
        return problem(415, "Unsupported Media Type", "unsupported-media-type", detail);
    }

    /** 409 with {@code Retry-After: 1}: the first request is still running; a retry a second later may replay it. */
    public static StoredResponse conflict() {
        StoredResponse p = problem(409, "Conflict", "request-in-progress",
                "A request with this Idempotency-Key is still being processed; retry later.");
        return new StoredResponse(409, Map.of("Content-Type", CONTENT_TYPE, "Retry-After", "1"), p.body());
    }

    public static StoredResponse mismatch() {
        return problem(422, "Unprocessable Content", "idempotency-key-reused",
                "This Idempotency-Key was already used for a different request (method, path or body).");
    }

    /**
     * 500: this request ran past its claim's lease and lost the key to another request before it could store its
     * response; whether its effect stands beside the other's is unknown to idemkit.
     */
    public static StoredResponse claimLost() {
        return problem(500, "Internal Server Error", "idempotency-claim-lost",
                "This request took longer than its Idempotency-Key claim allowed and lost the key before its result"
                        + " was stored; its outcome is unknown. Retry with the same key to get the key's answer.");
    }

    /** The problem types of the Idempotency-Key decisions (the last segment of their {@code type} URI). */
    public static final java.util.Set<String> KEY_PROBLEM_TYPES = java.util.Set.of("invalid-idempotency-key",
            "request-in-progress", "idempotency-key-reused", "idempotency-claim-lost");

    /** Whether {@code r} is one of {@link #KEY_PROBLEM_TYPES}, as built here. */
    public static boolean isKeyProblem(StoredResponse r) {
        if (!CONTENT_TYPE.equals(r.headers().get("Content-Type"))) {
            return false;
        }
        String body = new String(r.body(), StandardCharsets.UTF_8);
        return KEY_PROBLEM_TYPES.stream().anyMatch(t -> body.startsWith("{\"type\":\"" + TYPE_BASE + t + "\""));
    }

    private static final String TYPE_BASE = "https://idemkit.dev/problems/";

    public static StoredResponse problem(int status, String title, String type, String detail) {
        String json = "{\"type\":\"" + TYPE_BASE + type + "\",\"title\":\"" + escape(title)
                + "\",\"status\":" + status + ",\"detail\":\"" + escape(detail) + "\"}";
        return new StoredResponse(status, Map.of("Content-Type", CONTENT_TYPE), json.getBytes(StandardCharsets.UTF_8));
    }

    static String escape(String s) {
        StringBuilder out = new StringBuilder(s.length() + 8);
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.toString();
    }
}
