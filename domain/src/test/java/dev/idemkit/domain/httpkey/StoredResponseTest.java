package dev.idemkit.domain.httpkey;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.SourceDSL;

/** Credential headers are never in a storable response, whatever their case; every other header is. */
class StoredResponseTest {

    @Test
    void credentialHeadersAreDroppedAndTheOthersKept() {
        StoredResponse r = new StoredResponse(201, Map.of("Content-Type", "application/json", "Location", "/p/1",
                "Set-Cookie", "session=abc", "WWW-Authenticate", "Bearer", "authorization", "Bearer secret"),
                "{}".getBytes(StandardCharsets.UTF_8));

        assertThat(r.headers()).as("a live response keeps them").containsKey("Set-Cookie");
        assertThat(r.storable().headers()).containsOnlyKeys("Content-Type", "Location");
        assertThat(r.storable().body()).isEqualTo(r.body());
    }

    /** 1000 random header sets mixing credential names in random case with ordinary ones. */
    @Test
    void noCredentialHeaderSurvivesInAnyCase() {
        List<String> credentials = new ArrayList<>(StoredResponse.NEVER_STORED);
        Gen<String> credential = SourceDSL.integers().between(0, credentials.size() - 1)
                .zip(SourceDSL.longs().all(), (i, seed) -> randomCase(credentials.get(i), seed));
        Gen<String> ordinary = SourceDSL.strings().betweenCodePoints('a', 'z').ofLengthBetween(1, 12)
                .map(s -> "X-" + s);
        qt().withExamples(1000).forAll(SourceDSL.lists().of(credential).ofSizeBetween(0, 4),
                SourceDSL.lists().of(ordinary).ofSizeBetween(0, 4)).checkAssert((bad, good) -> {
                    Map<String, String> headers = new HashMap<>();
                    bad.forEach(h -> headers.put(h, "secret"));
                    good.forEach(h -> headers.put(h, "v"));
                    StoredResponse r = new StoredResponse(200, headers, new byte[0]).storable();
                    assertThat(r.headers().keySet()).allSatisfy(h -> assertThat(StoredResponse.NEVER_STORED)
                            .doesNotContain(h.toLowerCase(Locale.ROOT)));
                    assertThat(r.headers().keySet()).containsExactlyInAnyOrderElementsOf(new java.util.HashSet<>(good));
                });
    }

    private static String randomCase(String s, long seed) {
        java.util.Random random = new java.util.Random(seed);
        StringBuilder out = new StringBuilder(s.length());
        for (char c : s.toCharArray()) {
            out.append(random.nextBoolean() ? Character.toUpperCase(c) : c);
        }
        return out.toString();
    }
}
