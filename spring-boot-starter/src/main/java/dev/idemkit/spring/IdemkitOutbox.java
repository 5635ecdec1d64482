package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.PostgresOutbox;
import dev.idemkit.ports.out.OutboxMessage;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The transactional outbox for a Spring service: an event appended inside the service's transaction is published if
 * and only if that transaction commits, by the relay the starter runs ({@code IdemkitOutboxRelay}), in commit order
 * per ordering key, with the returned id as its message id every time it is published (a republish after a crash is
 * absorbed by the consumer's inbox).
 *
 * <pre>{@code
 * @Transactional
 * public void place(Order order) {
 *     jdbc.update("INSERT INTO orders (id, total) VALUES (?, ?)", order.id(), order.total());
 *     outbox.append("order-placed", "order-" + order.id(), json(order));
 * }
 * }</pre>
 *
 * The row joins the JDBC connection Spring's transaction manager bound for the data source (a
 * {@code DataSourceTransactionManager}'s or a {@code JpaTransactionManager}'s), as {@link IdempotentInbox} does; outside
 * a transaction it refuses with an {@link IllegalStateException} (an event committed apart from its effect is the dual
 * write the outbox exists to avoid). The destination is the one {@code idemkit.outbox.destinations.<event type>} names
 * when the row is written: a later change of the property does not move committed rows. The event type travels in the
 * {@value #EVENT_TYPE_HEADER} header. An append holds a lock on its ordering key until the transaction ends: append as
 * late in the transaction as you can. Thread-safe.
 */
public final class IdemkitOutbox {
    /** The header that carries the event type to the consumer. */
    public static final String EVENT_TYPE_HEADER = "x-idemkit-event-type";

    private final SpringCallerTransaction transaction;
    private final PostgresOutbox outbox;
    private final Map<String, String> destinations;

    IdemkitOutbox(SpringCallerTransaction transaction, PostgresOutbox outbox, Map<String, String> destinations) {
        this.transaction = Objects.requireNonNull(transaction, "transaction");
        this.outbox = Objects.requireNonNull(outbox, "outbox");
        this.destinations = Map.copyOf(destinations);
    }

    /**
     * Appends an event with a text body (UTF-8) in the current Spring transaction.
     *
     * @param eventType a key of {@code idemkit.outbox.destinations}
     * @param orderingKey events of one key are published one at a time, in the order their transactions committed
     * @return the message id the event is published with
     * @throws IllegalArgumentException for an event type without a destination, or an invalid key or header
     * @throws IllegalStateException when no Spring transaction is active
     */
    public String append(String eventType, String orderingKey, String body) {
        Objects.requireNonNull(body, "body");
        return append(eventType, orderingKey, Map.of(), body.getBytes(StandardCharsets.UTF_8));
    }

    /** {@link #append(String, String, String)} with a binary body. */
    public String append(String eventType, String orderingKey, byte[] body) {
        return append(eventType, orderingKey, Map.of(), body);
    }

    /** The same with headers of your own (strings; {@value #EVENT_TYPE_HEADER} is idemkit's and is set over yours). */
    public String append(String eventType, String orderingKey, Map<String, String> headers, byte[] body) {
        Objects.requireNonNull(headers, "headers");
        String destination = destinations.get(Objects.requireNonNull(eventType, "eventType"));
        if (destination == null) {
            throw new IllegalArgumentException("no destination for event type '" + eventType + "': set"
                    + " idemkit.outbox.destinations." + eventType + " to the queue it is published to (known: "
                    + new java.util.TreeSet<>(destinations.keySet()) + ")");
        }
        Map<String, String> all = new HashMap<>(headers);
        all.put(EVENT_TYPE_HEADER, eventType);
        OutboxMessage message = new OutboxMessage(destination, orderingKey, all, body);
        return outbox.append(transaction.connection(), message);
    }
}
