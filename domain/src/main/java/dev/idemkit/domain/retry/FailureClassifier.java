package dev.idemkit.domain.retry;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/** Sorts failures into retryable and non-retryable. */
@FunctionalInterface
public interface FailureClassifier {
    FailureClass classify(Throwable failure);

    /**
     * {@link NonRetryableException} anywhere in the cause chain is non-retryable: it is an explicit verdict
     * and survives wrapping. {@link IllegalArgumentException} (validation, bad keys) is non-retryable only
     * as the failure itself: wrapped in another exception it is that exception's detail (a driver or client
     * library refusing an argument while the database or broker failed), and the outer exception decides.
     * Everything else is retryable.
     */
    static FailureClassifier defaults() {
        return failure -> {
            if (failure instanceof IllegalArgumentException) {
                return FailureClass.NON_RETRYABLE;
            }
            // a cause chain can loop (a.initCause(b); b.initCause(a)): stop at the first cause seen twice
            Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
            for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
                if (t instanceof NonRetryableException) {
                    return FailureClass.NON_RETRYABLE;
                }
            }
            return FailureClass.RETRYABLE;
        };
    }
}
