package dev.idemkit.spring;

import dev.idemkit.adapters.postgres.JoinedInboxStore;
import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.out.Guarded;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The inbox for a Spring service, inside the service's own transaction: call it from a {@code @Transactional}
 * method (or a listener running in one) and the key commits or rolls back with everything else the method does.
 *
 * <pre>{@code
 * @Transactional
 * public void onCredit(String messageId, String body, Credit credit) {
 *     inbox.runOnce("credits", messageId, body, () -> accounts.credit(credit.account(), credit.amount()));
 *     // callOnce(...) when the effect's value is wanted: Guarded<R>
 * }
 * }</pre>
 *
 * A redelivered message runs nothing and leaves the transaction as it was (never rollback-only); a message id reused
 * with another body is {@code rejected} and runs nothing; an effect that throws leaves no key and its exception
 * reaches the caller. Consumer names and message ids follow idemkit's key rules (1 to 255 printable characters);
 * anything else is an {@code InvalidKeyException} (an {@link IllegalArgumentException}) before anything is written.
 * Thread-safe.
 */
public final class IdempotentInbox {
    private final JoinedInboxStore store;
    private final InboxMeters meters;

    IdempotentInbox(JoinedInboxStore store, InboxMeters meters) {
        this.store = Objects.requireNonNull(store, "store");
        this.meters = Objects.requireNonNull(meters, "meters");
    }

    /**
     * Runs {@code effect} once per (consumer, message id) in the current Spring transaction.
     *
     * @param body the message's body: a redelivery must carry the same bytes (its SHA-256 is recorded with the key)
     * @return processed (with the effect's value), duplicate or rejected
     * @throws IllegalStateException when no Spring transaction is active
     */
    public <R> Guarded<R> callOnce(String consumer, String messageId, byte[] body, Supplier<R> effect) {
        Objects.requireNonNull(body, "body");
        Objects.requireNonNull(effect, "effect");
        InboxKey key = InboxKey.of(consumer, messageId);
        Guarded<R> result = store.runOnce(key, Fingerprint.of(body), work -> effect.get());
        meters.outcome(consumer, result.outcome());
        return result;
    }

    /** {@link #callOnce(String, String, byte[], Supplier)} with a text body (UTF-8). */
    public <R> Guarded<R> callOnce(String consumer, String messageId, String body, Supplier<R> effect) {
        Objects.requireNonNull(body, "body");
        return callOnce(consumer, messageId, body.getBytes(StandardCharsets.UTF_8), effect);
    }

    /** The same for an effect whose value is not needed: processed, duplicate or rejected. */
    public Outcome runOnce(String consumer, String messageId, String body, Runnable effect) {
        Objects.requireNonNull(effect, "effect");
        return callOnce(consumer, messageId, body, () -> {
            effect.run();
            return null;
        }).outcome();
    }

    /** The same with a binary body. */
    public Outcome runOnce(String consumer, String messageId, byte[] body, Runnable effect) {
        Objects.requireNonNull(effect, "effect");
        return callOnce(consumer, messageId, body, () -> {
            effect.run();
            return null;
        }).outcome();
    }
}
