package dev.idemkit.domain.deadletter;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * How old a dead letter may be for a plain redrive: younger than the dedup window (the inbox's retention).
 * An older one may come back after the inbox purged its key, so an effect that already ran once (a copy
 * processed while this one failed) could run again.
 *
 * <p>A dead letter's age counts from its first recorded attempt (the message was in the system at least
 * since then), or from its dead-lettering when no attempt is known.
 */
public record RedriveWindow(Duration dedupWindow) {
    public RedriveWindow {
        Objects.requireNonNull(dedupWindow, "dedupWindow");
        if (dedupWindow.isNegative() || dedupWindow.isZero()) {
            throw new IllegalArgumentException("the dedup window must be positive, got " + dedupWindow);
        }
    }

    /** The moment the dead letter's age counts from. */
    public static Instant since(DeadLetter deadLetter) {
        Instant since = deadLetter.deadLetteredAt();
        for (AttemptRecord a : deadLetter.attempts()) {
            if (a.at().isBefore(since)) {
                since = a.at();
            }
        }
        return since;
    }

    /** The dead letter's age at {@code now} (zero if its times lie in the future). */
    public static Duration age(DeadLetter deadLetter, Instant now) {
        Duration age = Duration.between(since(deadLetter), now);
        return age.isNegative() ? Duration.ZERO : age;
    }

    /** Whether a plain redrive (one approval) may republish it at {@code now}. */
    public boolean admits(DeadLetter deadLetter, Instant now) {
        return age(deadLetter, now).compareTo(dedupWindow) < 0;
    }
}
