package dev.idemkit.ports.out;

import dev.idemkit.domain.inbox.InboxDelivery;
import java.util.List;

/**
 * The effects of a batch of deliveries, run in ONE unit of work of the store ({@link InboxStore#runBatch}): it must
 * write only through {@code work}, like an {@link Effect}.
 *
 * @param <U> the store's unit of work
 */
@FunctionalInterface
public interface BatchEffect<U extends UnitOfWork> {
    /** Runs the effects of {@code fresh}: the deliveries whose keys are new, the first occurrence of each. */
    void run(U work, List<InboxDelivery> fresh) throws Exception;
}
