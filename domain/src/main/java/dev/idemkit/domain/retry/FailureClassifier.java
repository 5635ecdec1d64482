package dev.idemkit.domain.retry;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/** Sorts failures into retryable and non-retryable. */
@FunctionalInterface
public interface FailureClassifier {
    FailureClass classify(Throwable failure);

    /**
     * {@link NonRetryableException} and {@link IllegalArgumentException} (validation, bad keys) are
     * non-retryable, anywhere in the cause chain; everything else is retryable.
     */
    static FailureClassifier defaults() {
        return failure -> {
            // a cause chain can loop (a.initCause(b); b.initCause(a)): stop at the first cause seen twice
            Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
            for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
                if (t instanceof NonRetryableException || t instanceof IllegalArgumentException) {
                    return FailureClass.NON_RETRYABLE;
                }
            }
            return FailureClass.RETRYABLE;
        };
    }
}
