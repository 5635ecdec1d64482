package dev.idemkit.app.payments;

import dev.idemkit.domain.httpkey.ClientId;
import java.util.List;
import java.util.Optional;

/** Where charges are written. A charge is NOT idempotent by itself: the Idempotency-Key flow guards it. */
public interface PaymentLedger {
    Payment charge(ClientId client, PaymentRequest request);

    /** The payment with this id if it belongs to {@code client}; another client's payment is not found. */
    Optional<Payment> find(ClientId client, String paymentId);

    /** This client's payments to {@code accountId}, oldest first, at most {@code limit}; another client's are not listed. */
    List<Payment> forAccount(ClientId client, String accountId, int limit);

    /** How one unit of work charges. */
    @FunctionalInterface
    interface Charge {
        Payment charge(ClientId client, PaymentRequest request);
    }

    /** A ledger that charges through {@code charge} (a unit of work's) and reads through {@code reads}. */
    static PaymentLedger charging(Charge charge, PaymentLedger reads) {
        return new PaymentLedger() {
            @Override
            public Payment charge(ClientId client, PaymentRequest request) {
                return charge.charge(client, request);
            }

            @Override
            public Optional<Payment> find(ClientId client, String paymentId) {
                return reads.find(client, paymentId);
            }

            @Override
            public List<Payment> forAccount(ClientId client, String accountId, int limit) {
                return reads.forAccount(client, accountId, limit);
            }
        };
    }
}
