package dev.idemkit.ports.out;

/**
 * The broker already holds a queue (or topic) of this name whose type or arguments differ from what the settings
 * want. Not retryable: nothing changes until an operator changes the settings or migrates the queue, so a process
 * that meets it at start-up should stop with the message, which names the queue, each differing argument and both
 * values.
 */
public class TopologyMismatchException extends TransportException {
    private static final long serialVersionUID = 1L;

    private final String queue;

    public TopologyMismatchException(String queue, String message, Throwable cause) {
        super(message, cause);
        this.queue = queue;
    }

    /** The queue (or topic) that exists with other arguments. */
    public String queue() {
        return queue;
    }
}
