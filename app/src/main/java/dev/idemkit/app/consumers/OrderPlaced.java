package dev.idemkit.app.consumers;

import com.fasterxml.jackson.databind.JsonNode;
import dev.idemkit.app.json.CanonicalJson;
import dev.idemkit.domain.KeyRules;
import dev.idemkit.domain.retry.NonRetryableException;
import java.util.ArrayList;
import java.util.List;

/** The seed's {@code OrderPlaced} event: {@code {"order_id", "customer_id", "items": [...]}}. */
public record OrderPlaced(String orderId, String customerId, List<String> items) {
    public static final String QUEUE = "orders.placed";
    /** The event a new reservation emits through the outbox (PostgreSQL), ordered per customer. */
    public static final String RESERVED_EVENT = "inventory.reserved";

    public OrderPlaced {
        KeyRules.requireValid("order_id", orderId);
        KeyRules.requireValid("customer_id", customerId);
        items = List.copyOf(items);
    }

    /**
     * @throws NonRetryableException when the body is not JSON or a field is missing or wrong: no retry can fix it
     */
    public static OrderPlaced parse(byte[] body) {
        try {
            JsonNode n = CanonicalJson.parse(body);
            JsonNode items = n.get("items");
            if (items == null || !items.isArray()) {
                throw new IllegalArgumentException("items is required and must be an array of strings");
            }
            List<String> list = new ArrayList<>();
            items.forEach(i -> {
                if (!i.isTextual()) {
                    throw new IllegalArgumentException("items must be strings");
                }
                list.add(i.asText());
            });
            return new OrderPlaced(text(n, "order_id"), text(n, "customer_id"), list);
        } catch (IllegalArgumentException e) {
            throw new NonRetryableException("malformed OrderPlaced: " + e.getMessage(), e);
        }
    }

    /** The outbox ordering key of this order's {@code inventory.reserved}: per customer, in the event's namespace. */
    public String reservedOrderingKey() {
        return RESERVED_EVENT + "/" + customerId;
    }

    static String text(JsonNode n, String field) {
        JsonNode v = n.get(field);
        if (v == null || !v.isTextual()) {
            throw new IllegalArgumentException(field + " is required and must be a string");
        }
        return v.asText();
    }

    public byte[] toJson() {
        var node = CanonicalJson.MAPPER.createObjectNode();
        node.put("order_id", orderId);
        node.put("customer_id", customerId);
        items.forEach(node.putArray("items")::add);
        return CanonicalJson.canonical(node);
    }

    /** The items as canonical JSON (sorted, the form the order's effect stores). */
    public byte[] itemsJson() {
        return CanonicalItems.json(items);
    }
}
