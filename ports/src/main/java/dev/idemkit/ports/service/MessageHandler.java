package dev.idemkit.ports.service;

import dev.idemkit.domain.Message;
import dev.idemkit.ports.out.UnitOfWork;

/**
 * The user's business effect for one message, run inside the inbox's unit of work. Throw
 * {@code NonRetryableException} (which counts however deeply it is wrapped) or a bare
 * {@code IllegalArgumentException} for a payload that no retry can fix; anything else, including an
 * exception that merely carries an IllegalArgumentException as its cause, is retried with backoff.
 */
@FunctionalInterface
public interface MessageHandler<U extends UnitOfWork> {
    void handle(Message message, U work) throws Exception;
}
