package dev.idemkit.ports.out;

/**
 * A checked exception thrown by an {@link Effect}, carried unchecked. The unit of work was rolled back:
 * neither the key nor the effect's writes were kept. Unchecked exceptions from an effect are rethrown
 * as they are.
 */
public final class EffectFailedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public EffectFailedException(Throwable cause) {
        super(cause.getClass().getSimpleName() + (cause.getMessage() == null ? "" : ": " + cause.getMessage()), cause);
    }

    /** Rethrows a runtime exception or error as it is, wraps a checked one. */
    public static RuntimeException propagate(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new EffectFailedException(t);
    }
}
