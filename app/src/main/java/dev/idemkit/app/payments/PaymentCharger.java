package dev.idemkit.app.payments;

import dev.idemkit.domain.httpkey.StoredResponse;
import dev.idemkit.ports.in.IdempotentRequests;
import dev.idemkit.ports.out.UnitOfWork;
import java.util.Map;
import java.util.function.Function;

/**
 * Charges at most once per (client, Idempotency-Key): the one idempotent request flow with the charge as
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

    /**
     * The one Idempotency-Key flow around a charge: {@code ledgerIn} gives the ledger that charges in the claim's unit of
     * work (on PostgreSQL the claim's connection, so that key, charge and response commit together).
     */
    static <U extends UnitOfWork> PaymentCharger of(IdempotentRequests<U> requests,
            Function<? super U, PaymentLedger> ledgerIn) {
        return (request, payment) -> requests.handle(request,
                work -> created(ledgerIn.apply(work).charge(request.client(), payment)));
    }
}
