package dev.idemkit.adapters.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.domain.Fingerprint;
import dev.idemkit.domain.inbox.InboxKey;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The root README's plain-Java quick start, compiled and run: the lines between the markers below are the README's
 * snippet, character for character ({@link #theReadmeShowsExactlyThisCode} fails when the two drift apart).
 */
class QuickStartIT {
    private static TestDatabase pg;

    @BeforeAll
    static void start() {
        pg = TestDatabase.start(4);
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    /** The user's service: its own data source, its own SQL, its own transaction. */
    static void onMessage(DataSource dataSource, String messageId, String body, String account, long amount)
            throws SQLException {
        // quick-start:begin
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);                                  // your transaction
            var inbox = new JoinedInboxStore(CallerTransaction.jdbc(c));
            inbox.runOnce(InboxKey.of("payments", messageId), Fingerprint.of(body), work -> {
                credit(c, account, amount);                          // your SQL, same transaction
                return null;                                         // not run again for a duplicate
            });
            c.commit();                                              // key and credit together
        }
        // quick-start:end
    }

    private static void credit(Connection c, String account, long amount) throws SQLException {
        CallerHarness.credit(c, account, amount);
    }

    @Test
    void theSameMessageThreeTimesCreditsOnce() throws SQLException {
        DataSource dataSource = pg.counting(); // the schema already holds idemkit's tables (applyMigrations)
        PostgresDatabase.applyMigrations(dataSource, pg.schema()); // idempotent itself: nothing left to apply
        String account = "acc-" + UUID.randomUUID();
        String messageId = UUID.randomUUID().toString();
        for (int i = 0; i < 3; i++) {
            onMessage(dataSource, messageId, "{\"amount\":150}", account, 150);
        }
        assertThat(new Accounts(pg).balance(account)).isEqualTo(150);
        try (Connection c = pg.connection(); PreparedStatement ps = c.prepareStatement(
                "SELECT count(*) FROM processed_messages WHERE consumer = 'payments' AND message_id = ?")) {
            ps.setString(1, messageId);
            try (var rs = ps.executeQuery()) {
                rs.next();
                assertThat(rs.getLong(1)).isEqualTo(1);
            }
        }
    }

    @Test
    void theReadmeShowsExactlyThisCode() throws IOException {
        String source = Files.readString(Path.of("src/test/java/dev/idemkit/adapters/postgres/QuickStartIT.java"),
                StandardCharsets.UTF_8);
        String snippet = dedent(between(source, "// quick-start:begin\n", "        // quick-start:end"));
        String readme = Files.readString(Path.of("../README.md"), StandardCharsets.UTF_8);
        assertThat(readme).as("the root README's plain-Java quick start").contains(snippet);
    }

    /** Removes the indentation common to the non-blank lines. */
    private static String dedent(String text) {
        int indent = text.lines().filter(l -> !l.isBlank()).mapToInt(l -> l.length() - l.stripLeading().length())
                .min().orElse(0);
        StringBuilder out = new StringBuilder();
        text.lines().forEach(l -> out.append(l.isBlank() ? "" : l.substring(indent)).append('\n'));
        return out.toString();
    }

    private static String between(String text, String begin, String end) {
        int from = text.indexOf(begin) + begin.length();
        return text.substring(from, text.indexOf(end, from));
    }
}
