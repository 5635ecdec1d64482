package dev.idemkit.adapters.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class PostgresSettingsTest {

    @Test
    void withoutVariablesTheSettingsPointAtTheLocalTestDatabase() {
        PostgresSettings s = PostgresSettings.fromEnvironment(Map.of());
        assertThat(s).isEqualTo(PostgresSettings.defaults());
        assertThat(s.url()).isEqualTo("jdbc:postgresql://127.0.0.1:5432/test");
        assertThat(s.user()).isEqualTo("postgres");
        assertThat(s.schema()).isEqualTo("idemkit");
    }

    @Test
    void variablesOverrideEachDefault() {
        PostgresSettings s = PostgresSettings.fromEnvironment(Map.of("IDEMKIT_PG_URL", "jdbc:postgresql://db:5433/prod",
                "IDEMKIT_PG_USER", "app", "IDEMKIT_PG_PASSWORD", "s3cret!", "IDEMKIT_PG_SCHEMA", "billing",
                "IDEMKIT_PG_POOL_SIZE", "24"));
        assertThat(s).isEqualTo(new PostgresSettings("jdbc:postgresql://db:5433/prod", "app", "s3cret!", "billing", 24));
    }

    @Test
    void thePasswordNeverAppearsInToString() {
        PostgresSettings s = PostgresSettings.defaults().withSchema("x");
        PostgresSettings secret = new PostgresSettings(s.url() + "?password=hunter2", "u", "hunter2", "x", 5);
        assertThat(secret.toString()).doesNotContain("hunter2").contains("****");
    }

    @Test
    void aSchemaThatIsNotAPlainIdentifierIsRefused() {
        assertThatThrownBy(() -> PostgresSettings.defaults().withSchema("public; drop schema x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("schema");
        assertThatThrownBy(() -> PostgresSettings.fromEnvironment(Map.of("IDEMKIT_PG_POOL_SIZE", "many")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("IDEMKIT_PG_POOL_SIZE");
    }
}
