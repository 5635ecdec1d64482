package dev.idemkit.app.payments;

import dev.idemkit.domain.httpkey.ClientId;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A ledger whose every charge also emits {@code payments.created} through {@code emit}, which appends it to the outbox in
 * the charge's own unit of work: payment, stored response and event commit together or not at all.
 */
public record EmittingLedger(PaymentLedger ledger, Consumer<Payment> emit) implements PaymentLedger {

    @Override
    public Payment charge(ClientId client, PaymentRequest request) {
        Payment p = ledger.charge(client, request);
        emit.accept(p);
        return p;
    }

    @Override
    public Optional<Payment> find(ClientId client, String paymentId) {
        return ledger.find(client, paymentId);
    }

    @Override
    public List<Payment> forAccount(ClientId client, String accountId, int limit) {
        return ledger.forAccount(client, accountId, limit);
    }
}
