package dev.idemkit.app.payments;

import java.util.function.Consumer;

/**
 * Ledgers whose every charge also emits {@code payments.created} through {@code emit}, which appends it to the outbox in
 * the charge's own unit of work: payment, stored response and event commit together or not at all.
 */
public final class EmittingLedger {
    private EmittingLedger() {}

    /** {@code ledger}, each charge then emitted. */
    public static PaymentLedger of(PaymentLedger ledger, Consumer<Payment> emit) {
        return PaymentLedger.charging((client, request) -> {
            Payment p = ledger.charge(client, request);
            emit.accept(p);
            return p;
        }, ledger);
    }
}
