package dev.idemkit.spring.sample;

import dev.idemkit.domain.Outcome;
import dev.idemkit.spring.IdempotentInbox;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.interceptor.TransactionAspectSupport;

/** The sample service's business: credits, written with the service's own JdbcTemplate in its own transactions. */
@Service
public class Credits {
    private final IdempotentInbox inbox;
    private final JdbcTemplate jdbc;

    public Credits(IdempotentInbox inbox, JdbcTemplate jdbc) {
        this.inbox = inbox;
        this.jdbc = jdbc;
    }

    @Transactional
    public Outcome credit(String messageId, String body, String account, long amount) {
        return inbox.runOnce("credits", messageId, body, () -> jdbc.update(
                "UPDATE accounts SET balance = balance + ? WHERE id = ?", amount, account));
    }

    /** Credits, then fails: Spring rolls the transaction back, key included. */
    @Transactional
    public void creditThenFail(String messageId, String body, String account, long amount) {
        credit(messageId, body, account, amount);
        throw new IllegalStateException("failed after the credit");
    }

    /** The effect throws after crediting, the method catches it, writes a note and commits. */
    @Transactional
    public void creditCatchingTheEffectsFailure(String messageId, String body, String account, String note) {
        try {
            inbox.runOnce("credits", messageId, body, () -> {
                jdbc.update("UPDATE accounts SET balance = balance + 10 WHERE id = ?", account);
                throw new IllegalStateException("the effect failed after its credit");
            });
        } catch (IllegalStateException caught) {
            jdbc.update("INSERT INTO notes (text) VALUES (?)", note);
        }
    }

    /** A duplicate, then the method's own work: whether the transaction was left rollback-only. */
    @Transactional
    public boolean duplicateThenOwnWork(String messageId, String body, String account, String note) {
        Outcome outcome = credit(messageId, body, account, 1_000_000);
        if (outcome.effectRan()) {
            throw new AssertionError("expected a duplicate, got " + outcome);
        }
        jdbc.update("INSERT INTO notes (text) VALUES (?)", note);
        return TransactionAspectSupport.currentTransactionStatus().isRollbackOnly();
    }

    /** The inbox outside any transaction. */
    public Outcome creditWithoutTransaction(String messageId, String body, String account, long amount) {
        return credit(messageId, body, account, amount);
    }

    long balance(String account) {
        Long b = jdbc.queryForObject("SELECT balance FROM accounts WHERE id = ?", Long.class, account);
        return b == null ? 0 : b;
    }
}
