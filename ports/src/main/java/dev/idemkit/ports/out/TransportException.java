package dev.idemkit.ports.out;

/** The transport failed (broker unreachable, publish not confirmed). Adapters translate their exceptions into this. */
public class TransportException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public TransportException(String message, Throwable cause) {
        super(message, cause);
    }

    public TransportException(String message) {
        super(message);
    }
}
