package dev.idemkit.quickstart;

import dev.idemkit.adapters.postgres.CallerTransaction;
import dev.idemkit.adapters.postgres.JoinedInboxStore;
import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.inbox.InboxKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import javax.sql.DataSource;

public final class CreditOnce {
    private final DataSource dataSource;

    public CreditOnce(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    public void onMessage(String messageId, String body, String account, long amount) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);                                  // your transaction
            var inbox = new JoinedInboxStore(CallerTransaction.jdbc(c));
            inbox.runOnce(InboxKey.of("payments", messageId), Fingerprint.of(body), work -> {
                credit(c, account, amount);                          // your SQL, same transaction
                return null;                                         // not run again for a duplicate
            });
            c.commit();                                              // key and credit together
        }
    }

    private static void credit(Connection c, String account, long amount) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                INSERT INTO accounts (id, balance) VALUES (?, ?)
                ON CONFLICT (id) DO UPDATE SET balance = accounts.balance + excluded.balance
                """)) {
            ps.setString(1, account);
            ps.setLong(2, amount);
            ps.executeUpdate();
        }
    }
}
