package dev.idemkit.spring.jpasample;

import dev.idemkit.domain.Outcome;
import dev.idemkit.spring.IdempotentInbox;
import jakarta.persistence.EntityManager;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** The JPA sample's business, in Boot's JPA transactions. */
@Service
public class Wallets {
    private final IdempotentInbox inbox;
    private final EntityManager em;

    public Wallets(IdempotentInbox inbox, EntityManager em) {
        this.inbox = inbox;
        this.em = em;
    }

    @Transactional
    public void open(String id) {
        em.persist(new Wallet(id));
    }

    @Transactional
    public Outcome credit(String messageId, String body, String wallet, long amount) {
        return inbox.runOnce("wallets", messageId, body, () -> em.find(Wallet.class, wallet).credit(amount));
    }

    /** The effect changes the entity, then throws; the method catches the failure and returns normally. */
    @Transactional
    public void creditCatchingTheEffectsFailure(String messageId, String body, String wallet, long amount) {
        try {
            inbox.runOnce("wallets", messageId, body, () -> {
                em.find(Wallet.class, wallet).credit(amount);
                throw new IllegalStateException("the effect failed after changing the wallet");
            });
        } catch (IllegalStateException caught) {
            // the service decided to go on
        }
    }

    @Transactional(readOnly = true)
    public long balance(String wallet) {
        return em.find(Wallet.class, wallet).balance();
    }
}
