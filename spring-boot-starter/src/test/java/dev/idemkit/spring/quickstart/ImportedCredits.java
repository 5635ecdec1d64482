package dev.idemkit.spring.quickstart;

import dev.idemkit.domain.Outcome;
import dev.idemkit.spring.IdempotentInbox;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

// Messages that do not come through a @RabbitListener (a file, another broker, a webhook):
// IdempotentInbox joins your transaction.
@Service
public class ImportedCredits {
    private final IdempotentInbox inbox;
    private final JdbcTemplate jdbc;

    public ImportedCredits(IdempotentInbox inbox, JdbcTemplate jdbc) {
        this.inbox = inbox;
        this.jdbc = jdbc;
    }

    @Transactional
    public Outcome credit(String messageId, String body, String account, long amount) {
        return inbox.runOnce("imported-credits", messageId, body, () -> jdbc.update(
                "UPDATE accounts SET balance = balance + ? WHERE id = ?", amount, account));
    }
}
