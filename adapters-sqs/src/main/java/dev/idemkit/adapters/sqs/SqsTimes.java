package dev.idemkit.adapters.sqs;

import java.time.Duration;

/** SQS's time limits and the rounding to its whole seconds. */
final class SqsTimes {
    /** The longest visibility timeout SQS accepts. */
    static final Duration MAX_VISIBILITY = Duration.ofHours(12);

    private SqsTimes() {}

    /** {@code d} rounded up to whole seconds, clamped to 0..12 h: SQS counts visibility in seconds. */
    static int visibilitySeconds(Duration d) {
        if (d.isNegative() || d.isZero()) {
            return 0;
        }
        if (d.compareTo(MAX_VISIBILITY) >= 0) {
            return (int) MAX_VISIBILITY.toSeconds();
        }
        long seconds = d.toSeconds();
        return (int) (d.toNanosPart() > 0 ? seconds + 1 : seconds);
    }
}
