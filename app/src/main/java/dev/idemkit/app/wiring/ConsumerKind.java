package dev.idemkit.app.wiring;

import dev.idemkit.app.consumers.AccountCredit;
import dev.idemkit.app.consumers.BusinessEffects;
import dev.idemkit.app.consumers.OrderPlaced;
import dev.idemkit.ports.out.UnitOfWork;
import dev.idemkit.ports.service.BatchHandler;
import dev.idemkit.ports.service.MessageHandler;

/** The app's two consumers, with the queue each reads and the consumer name in its inbox keys. */
public enum ConsumerKind {
    RESERVE_INVENTORY(OrderPlaced.QUEUE, "inventory-reservation"),
    CREDIT_ACCOUNT(AccountCredit.QUEUE, "account-credit");

    private final String queue;
    private final String consumerName;

    ConsumerKind(String queue, String consumerName) {
        this.queue = queue;
        this.consumerName = consumerName;
    }

    public String queue() {
        return queue;
    }

    public String consumerName() {
        return consumerName;
    }

    <U extends UnitOfWork> MessageHandler<U> handler(BusinessEffects<U> effects) {
        return this == RESERVE_INVENTORY ? effects.reserveInventory() : effects.creditAccount();
    }

    /** The same effect for a batch of new messages in one unit of work. */
    <U extends UnitOfWork> BatchHandler<U> batchHandler(BusinessEffects<U> effects) {
        return this == RESERVE_INVENTORY ? effects.reserveInventories() : effects.creditAccounts();
    }
}
