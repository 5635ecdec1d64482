package dev.idemkit.domain.retry;

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
            for (Throwable t = failure; t != null; t = t.getCause()) {
                if (t instanceof NonRetryableException || t instanceof IllegalArgumentException) {
                    return FailureClass.NON_RETRYABLE;
                }
                if (t.getCause() == t) {
                    break;
                }
            }
            return FailureClass.RETRYABLE;
        };
    }
}
