package dev.idemkit.domain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class FingerprintTest {

    private static final String SHA256_OF_ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

    @Test
    void dedupIdOfContentIsTheHexSha256OfTheBytes() {
        assertThat(DedupId.ofContent("abc".getBytes(StandardCharsets.US_ASCII)).value()).isEqualTo(SHA256_OF_ABC);
        assertThat(Fingerprint.of("abc").hex()).isEqualTo(SHA256_OF_ABC);
        assertThat(Fingerprint.of("").hex()).as("FIPS 180-2 empty message")
                .isEqualTo("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }

    @Test
    void partsThatConcatenateAlikeStillGiveDifferentRequestFingerprints() {
        Fingerprint a = Fingerprint.ofRequest("POST", "/a", "bc".getBytes(StandardCharsets.UTF_8));
        Fingerprint b = Fingerprint.ofRequest("POST", "/ab", "c".getBytes(StandardCharsets.UTF_8));
        Fingerprint c = Fingerprint.ofRequest("POST/", "ab", "c".getBytes(StandardCharsets.UTF_8));
        assertThat(a).isNotEqualTo(b).isNotEqualTo(c);
        assertThat(b).isNotEqualTo(c);
    }

    @Test
    void onlyLowercaseSha256HexIsAFingerprint() {
        assertThatThrownBy(() -> new Fingerprint(SHA256_OF_ABC.toUpperCase()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("64 lowercase hex");
        assertThatThrownBy(() -> new Fingerprint("abc")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("got: 3 characters");
        assertThatThrownBy(() -> new Fingerprint(null)).isInstanceOf(IllegalArgumentException.class);
        assertThat(new Fingerprint(SHA256_OF_ABC)).hasToString(SHA256_OF_ABC);
    }

    @Test
    void aDedupIdIsAKeyOfAtMost128Characters() {
        assertThat(new DedupId("a".repeat(128)).value()).hasSize(128);
        assertThatThrownBy(() -> new DedupId("a".repeat(129))).isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("at most 128");
        assertThatThrownBy(() -> new DedupId("a b")).isInstanceOf(InvalidKeyException.class)
                .hasMessageContaining("deduplication id");
    }
}
