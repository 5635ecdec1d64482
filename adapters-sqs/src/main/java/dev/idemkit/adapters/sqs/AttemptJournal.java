package dev.idemkit.adapters.sqs;

import dev.idemkit.domain.deadletter.AttemptRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The failed attempts of messages waiting for a retry, kept by this process and keyed by SQS's own
 * MessageId (stable across receives of one message).
 *
 * <p>Why here and not on the message: a retry keeps the message in SQS and only changes its
 * visibility, and SQS cannot change the attributes of a message in flight. The attempt NUMBER is
 * SQS's {@code ApproximateReceiveCount}, so it survives crashes and other consumers exactly; the
 * per-attempt timestamps and errors are kept here and written onto the dead letter at dead-letter
 * time. An attempt this process has no record of (a crash, a restart, an expired visibility, another
 * consumer process) appears in the history with its number, the first-receive time and an error that
 * says it was not recorded. Entries are dropped when the message is settled; entries of messages never
 * settled here are swept once the journal holds more than 100,000 (those untouched for 13 h, beyond SQS's
 * 12 h visibility limit), so the journal stays bounded without a timer.
 */
final class AttemptJournal {
    static final String NOT_RECORDED = "not recorded: this attempt ended without a settle by this process"
            + " (crash, restart, expired visibility or another consumer)";
    private static final Duration EXPIRY = Duration.ofHours(13);
    private static final int MAX_ENTRIES = 100_000;

    private record Entry(List<AttemptRecord> attempts, Instant touched) {}

    private final Map<String, Entry> entries = new ConcurrentHashMap<>();

    void record(String sqsMessageId, AttemptRecord failed) {
        Instant now = Instant.now();
        entries.compute(sqsMessageId, (k, old) -> {
            List<AttemptRecord> list = new ArrayList<>(old == null ? List.of() : old.attempts());
            list.removeIf(a -> a.number() == failed.number());
            list.add(failed);
            return new Entry(List.copyOf(list), now);
        });
        if (entries.size() > MAX_ENTRIES) {
            entries.values().removeIf(e -> e.touched().isBefore(now.minus(EXPIRY)));
        }
    }

    /** Attempts 1..{@code attempt - 1}, oldest first, with unrecorded ones filled in. */
    List<AttemptRecord> history(String sqsMessageId, int attempt, Instant firstReceived) {
        Entry entry = entries.get(sqsMessageId);
        List<AttemptRecord> out = new ArrayList<>();
        for (int n = 1; n < attempt; n++) {
            AttemptRecord known = null;
            if (entry != null) {
                for (AttemptRecord a : entry.attempts()) {
                    if (a.number() == n) {
                        known = a;
                    }
                }
            }
            out.add(known != null ? known : new AttemptRecord(n, firstReceived, NOT_RECORDED));
        }
        return List.copyOf(out);
    }

    void forget(String sqsMessageId) {
        entries.remove(sqsMessageId);
    }
}
