package dev.idemkit.app.payments;

import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.in.IdempotentRequests;
import java.util.Map;

/**
 * Charges at most once per (client, Idempotency-Key): the idempotent request flow with the charge as
 * its effect. On PostgreSQL the charge runs in the same transaction as the key's claim, so key, charge
 * and stored response commit together and a crash releases the key; elsewhere the flow claims, charges,
 * then stores the response.
 */
public interface PaymentCharger {

    /** @return the executed or replayed response, or a 400 / 409 / 422 problem */
    IdempotentRequests.Reply charge(IdempotentRequests.Request request, PaymentRequest payment);

    /** The 201 response for a new charge, the one that is stored and replayed byte for byte. */
    static StoredResponse created(Payment p) {
        return new StoredResponse(201, Map.of("Content-Type", "application/json", "Location", "/payments/" + p.id()),
                p.toJson());
    }

    /** The generic flow: the ports' {@code IdempotentRequestService} around {@link PaymentLedger#charge}. */
    static PaymentCharger of(IdempotentRequests requests, PaymentLedger ledger) {
        return (request, payment) -> requests.handle(request, () -> created(ledger.charge(request.client(), payment)));
    }
}
