package dev.idemkit.adapters.redis;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.Outcome;
import dev.idemkit.domain.inbox.Inbox;
import dev.idemkit.domain.inbox.InboxKey;
import dev.idemkit.ports.out.StoreUnavailableException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The values an inbox key holds and what the {@link InboxScripts} answer, read the same way by the single and
 * the bulk inbox: {@code P:<token>:<fingerprint>} a live claim, {@code C:<fingerprint>} completed,
 * {@code X:<fingerprint>} partially applied (never run again), {@code !<error>} a claim the server refused;
 * completion answers OK, LOST, V:, and the failures turned into exceptions here.
 */
final class InboxAnswers {
    private static final Logger LOG = LoggerFactory.getLogger(InboxAnswers.class);

    private InboxAnswers() {}

    /** A value found on an inbox key (or answered for it by a script), parsed once. */
    sealed interface KeyValue {
        /** The key is this caller's: it claimed it just now (the claim answers nothing or its own value). */
        record Ours() implements KeyValue {}

        /** A live claim of another delivery. */
        record HeldByAnother() implements KeyValue {}

        /** Completed by a delivery with this fingerprint. */
        record Completed(Fingerprint fingerprint) implements KeyValue {}

        /** Partially applied by an earlier delivery: never run again, never a duplicate. */
        record PartiallyApplied() implements KeyValue {}

        /** The server refused the claim (the error it gave). */
        record Refused(String error) implements KeyValue {}

        /** {@code raw} as found on the key, where {@code mine} (or null) is this caller's own claim value. */
        static KeyValue of(String raw, String mine) {
            if (raw == null || raw.isEmpty() || raw.equals(mine)) {
                return new Ours();
            }
            if (raw.startsWith("C:")) {
                return new Completed(new Fingerprint(raw.substring(2)));
            }
            if (raw.startsWith("X:")) {
                return new PartiallyApplied();
            }
            if (raw.startsWith("!")) {
                return new Refused(raw.substring(1));
            }
            return new HeldByAnother();
        }
    }

    /** What a completion script answered, parsed once. */
    sealed interface CompletionAnswer {
        /** The answer as the script gave it (for failure messages). */
        String text();

        /** {@code OK}: the staged writes applied and the key is completed. */
        record Applied() implements CompletionAnswer {
            @Override
            public String text() {
                return "OK";
            }
        }

        /** {@code LOST}: the claim was no longer this caller's; nothing was written. */
        record Lost() implements CompletionAnswer {
            @Override
            public String text() {
                return "LOST";
            }
        }

        /** {@code V:<value>}: the key was not free; this is what it held. Nothing was written. */
        record Found(String value) implements CompletionAnswer {
            @Override
            public String text() {
                return "V:" + value;
            }
        }

        /** Anything else ({@code REFUSED}, {@code BADKEY}, {@code PARTIAL}, ...): see {@link #completionFailure}. */
        record Failed(String text) implements CompletionAnswer {}

        static CompletionAnswer of(String raw) {
            if ("OK".equals(raw)) {
                return new Applied();
            }
            if ("LOST".equals(raw)) {
                return new Lost();
            }
            if (raw != null && raw.startsWith("V:")) {
                return new Found(raw.substring(2));
            }
            return new Failed(String.valueOf(raw));
        }
    }

    /** A fresh in-progress value: {@code P:<random token>:<fingerprint>}, ours alone. */
    static String claimValue(Fingerprint fingerprint) {
        return "P:" + token() + ":" + fingerprint.hex();
    }

    /** The completed value {@code C:<fingerprint>}. */
    static String completed(Fingerprint fingerprint) {
        return "C:" + fingerprint.hex();
    }

    /**
     * What a value found on the key decides: the outcome for a completed key (duplicate or reused id); empty for a
     * live claim (another delivery's: wait or retry); a failure for a partially applied key or a refused claim.
     */
    static Optional<Outcome> settled(InboxKey key, Fingerprint fingerprint, KeyValue existing) {
        if (existing instanceof KeyValue.Completed completed) {
            return Optional.of(Inbox.decide(Optional.of(completed.fingerprint()), fingerprint));
        }
        if (existing instanceof KeyValue.PartiallyApplied) {
            throw partiallyApplied(key);
        }
        if (existing instanceof KeyValue.Refused refused) {
            throw claimFailure(key, refused.error());
        }
        return Optional.empty();
    }

    /** Whether our claim may be released after this completion answer: not when writes were applied or the key is not ours. */
    static boolean releasable(String result) {
        return !result.startsWith("PARTIAL ") && !result.startsWith("BADKEY ");
    }

    /**
     * The exception for a completion answer other than OK, LOST and V:. REFUSED (Redis refused the unit's first
     * write: out of memory, a read-only replica after a failover) is retryable; the rest are not. PARTIAL (a write
     * failed on the server after the check passed, e.g. an ACL denying it) is logged at ERROR: the unit's earlier
     * writes are applied, and the key holds {@code X:} (no TTL) so that no redelivery applies them again.
     */
    static RuntimeException completionFailure(InboxKey key, String result, List<RedisUnitOfWork.Staged> staged,
            boolean claimed) {
        String[] parts = result.split(" ", 2);
        String detail = parts.length > 1 ? parts[1] : "";
        String released = claimed ? " and the claim was released" : "";
        switch (parts[0]) {
            case "REFUSED":
                return new StoreUnavailableException("Redis refused the first write of message " + key.messageId()
                        + " (" + detail + "); nothing was written" + released + "; retry", null);
            case "BADKEY":
                return new IllegalStateException("the inbox key of message " + key.messageId() + " of consumer "
                        + key.consumer() + " holds a value of another type (" + detail + "); nothing was written");
            case "PARTIAL":
                LOG.error("inbox decision=partially-applied consumer={} message_id={}: {}", key.consumer(),
                        key.messageId(), result);
                return new IllegalStateException(describe(result, staged, ""));
            default:
                return new IllegalStateException(describe(result, staged, "nothing was written" + released));
        }
    }

    /** The failure for a key marked {@code X:} by a partially applied unit: never run again, never a duplicate. */
    static IllegalStateException partiallyApplied(InboxKey key) {
        return new IllegalStateException("message " + key.messageId() + " of consumer " + key.consumer()
                + " was partially applied by an earlier delivery (a staged write failed on the server; see the ERROR"
                + " log); it is not run again: repair the data, then delete its inbox key");
    }

    /** The failure for a claim the server refused ({@code !<error>}): the inbox key could not be read or written. */
    static RuntimeException claimFailure(InboxKey key, String error) {
        return error.startsWith("WRONGTYPE")
                ? new IllegalStateException("the inbox key of message " + key.messageId() + " of consumer "
                        + key.consumer() + " holds a value of another type: " + error)
                : new StoreUnavailableException("Redis refused to claim message " + key.messageId() + ": " + error, null);
    }

    /** The failure for a claim that expired (after {@code lease}) before its completion. */
    static ClaimLostException lost(InboxKey key, Duration lease) {
        return new ClaimLostException("the claim on message " + key.messageId() + " of consumer " + key.consumer()
                + " expired before the effect completed (lease " + lease + "); nothing was written; retry");
    }

    /** The message for a completion result that names a staged write that cannot (or did not) apply. */
    static String describe(String result, List<RedisUnitOfWork.Staged> staged, String consequence) {
        String[] parts = String.valueOf(result).split(" ", 3);
        if (parts[0].equals("PARTIAL") && parts.length >= 2 && parts[1].equals(Integer.toString(staged.size() + 1))) {
            return "the completion of the key failed on the server (" + (parts.length > 2 ? parts[2] : "")
                    + ") after the unit's writes were applied";
        }
        if (parts.length >= 2 && parts[1].matches("\\d{1,9}") && Integer.parseInt(parts[1]) >= 1
                && Integer.parseInt(parts[1]) <= staged.size()) {
            RedisUnitOfWork.Staged s = staged.get(Integer.parseInt(parts[1]) - 1);
            if (parts[0].equals("PARTIAL")) {
                return "staged " + s.op() + " on " + s.key() + " failed on the server (" + (parts.length > 2 ? parts[2] : "")
                        + ") after the unit's earlier writes were applied; the key is marked partially applied so that"
                        + " no redelivery applies them again";
            }
            if (List.of("WRONGTYPE", "NOTINT", "OVERFLOW", "BADOP").contains(parts[0])) {
                return "staged " + s.op() + " on " + s.key() + " cannot apply (" + parts[0] + "); " + consequence;
            }
        }
        return "unexpected completion result " + result;
    }

    private static String token() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        return Long.toHexString(r.nextLong() | Long.MIN_VALUE) + Long.toHexString(r.nextLong() | Long.MIN_VALUE);
    }
}
