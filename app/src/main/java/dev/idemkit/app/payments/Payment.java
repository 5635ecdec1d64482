package dev.idemkit.app.payments;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.idemkit.app.json.CanonicalJson;
import dev.idemkit.domain.httpkey.ClientId;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/** One charge, owned by the client that made it. */
public record Payment(String id, ClientId client, PaymentRequest request, Instant createdAt) {
    /** The event a new charge emits through the outbox (PostgreSQL), ordered per account; its body is {@link #toJson()}. */
    public static final String CREATED_EVENT = "payments.created";

    /**
     * The outbox ordering key of a payment's event: per account, in the event's own namespace (ordering keys are shared
     * by every destination, and an account id may equal another entity's id).
     */
    public static String orderingKey(Payment p) {
        return CREATED_EVENT + "/" + p.request().accountId();
    }

    public Payment {
        createdAt = createdAt.truncatedTo(ChronoUnit.MICROS);
    }

    /** The JSON a client sees; the owner's client id is not part of it. */
    public byte[] toJson() {
        ObjectNode node = CanonicalJson.MAPPER.createObjectNode();
        node.put("id", id);
        node.put("status", "succeeded");
        node.put("amount", request.amount());
        node.put("currency", request.currency());
        node.put("account_id", request.accountId());
        node.put("created_at", createdAt.toString());
        return CanonicalJson.canonical(node);
    }
}
