package dev.idemkit.app.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idemkit.domain.httpkey.ClientId;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Client credentials: a bearer key maps to its client; anything else maps to nobody. */
class ApiKeysTest {
    private final ApiKeys keys = ApiKeys.of(Map.of("client-a", "key-aaaaaaaa", "client-b", "key-bbbbbbbb"));

    @Test
    void aKnownBearerKeyIdentifiesItsClient() {
        assertThat(keys.authenticate("Bearer key-aaaaaaaa")).hasValue(ClientId.of("client-a"));
        assertThat(keys.authenticate("Bearer key-bbbbbbbb")).hasValue(ClientId.of("client-b"));
    }

    @Test
    void theSchemeIsCaseInsensitiveAndSurroundingSpaceIsIgnored() {
        assertThat(keys.authenticate("bearer key-aaaaaaaa")).hasValue(ClientId.of("client-a"));
        assertThat(keys.authenticate("BEARER   key-aaaaaaaa  ")).hasValue(ClientId.of("client-a"));
    }

    @Test
    void anUnknownMissingOrMalformedCredentialIdentifiesNobody() {
        assertThat(keys.authenticate(null)).isEmpty();
        assertThat(keys.authenticate("")).isEmpty();
        assertThat(keys.authenticate("Bearer")).isEmpty();
        assertThat(keys.authenticate("Bearer ")).isEmpty();
        assertThat(keys.authenticate("Bearer key-cccccccc")).isEmpty();
        assertThat(keys.authenticate("key-aaaaaaaa")).as("no scheme").isEmpty();
        assertThat(keys.authenticate("Basic key-aaaaaaaa")).isEmpty();
        assertThat(keys.authenticate("Bearer key-aaaaaaa")).as("a prefix of a key").isEmpty();
        assertThat(keys.authenticate("Bearer key-aaaaaaaab")).as("a key with more after it").isEmpty();
        assertThat(keys.authenticate("Bearer KEY-AAAAAAAA")).as("keys are case-sensitive").isEmpty();
        assertThat(keys.authenticate("Bearer client-a")).as("a client id is not a key").isEmpty();
    }

    @Test
    void theSameKeyForTwoClientsIsRefused() {
        Map<String, String> shared = new LinkedHashMap<>();
        shared.put("a", "key-shared-1");
        shared.put("b", "key-shared-1");

        assertThatThrownBy(() -> ApiKeys.of(shared)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageNotContaining("key-shared-1");
    }

    @Test
    void aShortKeyOrNoKeyAtAllIsRefused() {
        assertThatThrownBy(() -> ApiKeys.of(Map.of("a", "short"))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ApiKeys.of(Map.of())).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void manyClientsAreEachFound() {
        Map<String, String> many = new LinkedHashMap<>();
        for (int i = 0; i < 50; i++) {
            many.put("client-" + i, "key-" + "x".repeat(8) + i);
        }
        ApiKeys all = ApiKeys.of(many);

        assertThat(all.size()).isEqualTo(50);
        many.forEach((client, key) -> assertThat(all.authenticate("Bearer " + key)).hasValue(ClientId.of(client)));
    }
}
