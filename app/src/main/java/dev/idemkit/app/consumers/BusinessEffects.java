package dev.idemkit.app.consumers;

import dev.idemkit.ports.out.UnitOfWork;
import dev.idemkit.ports.service.BatchHandler;
import dev.idemkit.ports.service.MessageHandler;
import java.math.BigDecimal;

/**
 * The seed's two effects, written for one store's unit of work so that they commit together with the
 * inbox key, plus the reads the exercises need.
 */
public interface BusinessEffects<U extends UnitOfWork> {

    /** {@code orders.placed}: one {@code inventory_reservations} row per order. */
    MessageHandler<U> reserveInventory();

    /** The same for a batch of new messages in one unit of work; by default {@link #reserveInventory} once per message. */
    default BatchHandler<U> reserveInventories() {
        return BatchHandler.eachOf(reserveInventory());
    }

    /** {@code accounts.credit}: {@code balance = balance + amount} — NOT idempotent by itself. */
    MessageHandler<U> creditAccount();

    /** The same for a batch of new messages in one unit of work; by default {@link #creditAccount} once per message. */
    default BatchHandler<U> creditAccounts() {
        return BatchHandler.eachOf(creditAccount());
    }

    /** The same credit with no inbox at all, each call in its own transaction (exercise 1's broken consumer). */
    void creditWithoutIdempotency(AccountCredit credit);

    BigDecimal balance(String accountId);

    long reservations(String orderId);

    /** Where the dedup decision is made, for exercise 1's "the fix uses a constraint in the store" criterion. */
    String dedupEvidence();
}
