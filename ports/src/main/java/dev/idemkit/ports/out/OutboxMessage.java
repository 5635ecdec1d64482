package dev.idemkit.ports.out;

import java.util.Map;
import java.util.Objects;

/**
 * A message to send once the unit of work that appends it commits: the destination queue, the ordering key (messages
 * of one key go out one at a time, in commit order), headers and body. The outbox gives it its message id.
 */
public record OutboxMessage(String destination, String orderingKey, Map<String, String> headers, byte[] body) {
    /** Longest destination accepted (brokers cap queue names at 80..255 characters). */
    public static final int MAX_NAME = 255;
    /**
     * Longest ordering key accepted. Keys are one namespace across destinations (a key may order an aggregate's events
     * to several queues), so a key is often the destination or the aggregate's type plus its id.
     */
    public static final int MAX_KEY = 1024;

    public OutboxMessage {
        destination = requireName("destination", destination, MAX_NAME);
        orderingKey = requireName("ordering key", orderingKey, MAX_KEY);
        headers = Map.copyOf(Objects.requireNonNull(headers, "headers"));
        headers.forEach((name, value) -> {
            requireName("header name", name, MAX_NAME);
            if (value.indexOf('\u0000') >= 0) {
                throw new IllegalArgumentException("header " + name + " holds a NUL character");
            }
        });
        body = Objects.requireNonNull(body, "body").clone();
    }

    public static OutboxMessage of(String destination, String orderingKey, byte[] body) {
        return new OutboxMessage(destination, orderingKey, Map.of(), body);
    }

    public OutboxMessage withHeaders(Map<String, String> h) {
        return new OutboxMessage(destination, orderingKey, h, body);
    }

    @Override
    public byte[] body() {
        return body.clone();
    }

    private static String requireName(String what, String value, int max) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException("an outbox message needs a " + what);
        }
        if (value.length() > max) {
            throw new IllegalArgumentException("the " + what + " is " + value.length() + " characters, at most "
                    + max + " allowed");
        }
        for (int i = 0; i < value.length(); i++) {
            if (Character.isISOControl(value.charAt(i))) {
                throw new IllegalArgumentException("the " + what + " has a control character at index " + i);
            }
        }
        return value;
    }
}
