package dev.idemkit.adapters.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idemkit.quickstart.CreditOnce;
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
 * The root README's plain-Java quick start, compiled and run: {@link CreditOnce} (a package of its own, so that its
 * imports are a user's) is the README's snippet, imports included, character for character
 * ({@link #theReadmeShowsExactlyThisCode} fails when the two drift apart).
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

    @Test
    void theSameMessageThreeTimesCreditsOnce() throws SQLException {
        DataSource dataSource = pg.counting(); // the schema already holds idemkit's tables (PostgresMigrations)
        PostgresMigrations.apply(dataSource, pg.schema()); // idempotent itself: nothing left to apply
        String account = "acc-" + UUID.randomUUID();
        String messageId = UUID.randomUUID().toString();
        CreditOnce service = new CreditOnce(dataSource);
        for (int i = 0; i < 3; i++) {
            service.onMessage(messageId, "{\"amount\":150}", account, 150);
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
        String source = Files.readString(Path.of("src/test/java/dev/idemkit/quickstart/CreditOnce.java"),
                StandardCharsets.UTF_8);
        String shown = source.substring(source.indexOf("\n\n") + 2); // the file, imports included, without its package
        String readme = Files.readString(Path.of("../README.md"), StandardCharsets.UTF_8);
        assertThat(readme).as("the root README's plain-Java quick start").contains(shown);
    }
}
