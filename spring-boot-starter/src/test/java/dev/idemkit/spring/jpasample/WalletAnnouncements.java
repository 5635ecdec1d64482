package dev.idemkit.spring.jpasample;

import dev.idemkit.spring.IdemkitOutbox;
import jakarta.persistence.EntityManager;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** A wallet opened and its event appended in one of Boot's JPA transactions. */
@Service
public class WalletAnnouncements {
    private final IdemkitOutbox outbox;
    private final EntityManager em;

    public WalletAnnouncements(IdemkitOutbox outbox, EntityManager em) {
        this.outbox = outbox;
        this.em = em;
    }

    /** @return the event's message id */
    @Transactional
    public String open(String id) {
        em.persist(new Wallet(id));
        return outbox.append("wallet-opened", "wallet-" + id, "opened:" + id);
    }

    /** Fails after its append, at the commit: the entity's insert is flushed then, and its id is taken. */
    @Transactional
    public String openAgain(String id) {
        return open(id);
    }
}
