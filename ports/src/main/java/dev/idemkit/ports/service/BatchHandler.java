package dev.idemkit.ports.service;

import dev.idemkit.domain.Message;
import dev.idemkit.ports.out.UnitOfWork;
import java.util.List;

/**
 * The effects of a batch of new messages, written through ONE unit of work (see {@link BatchingConsumer}): where the
 * effect can be written for many at once (one statement for all, rows locked in a fixed order so that concurrent
 * batches cannot deadlock), this is faster than {@link MessageHandler} once per message.
 *
 * @param <U> the store's unit of work
 */
@FunctionalInterface
public interface BatchHandler<U extends UnitOfWork> {
    /** Applies {@code fresh}: the messages whose keys are new, the first occurrence of each. */
    void handle(List<Message> fresh, U work) throws Exception;

    /** The batch as {@code handler} once per message, in order. */
    static <U extends UnitOfWork> BatchHandler<U> eachOf(MessageHandler<? super U> handler) {
        return (fresh, work) -> {
            for (Message m : fresh) {
                handler.handle(m, work);
            }
        };
    }
}
