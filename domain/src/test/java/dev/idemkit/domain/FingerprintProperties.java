package dev.idemkit.domain;

import static dev.idemkit.domain.Generators.anyBytes;
import static dev.idemkit.domain.Generators.anyRequest;
import static dev.idemkit.domain.Generators.anyText;
import static dev.idemkit.domain.Generators.cuts;
import static dev.idemkit.domain.Generators.requestsDifferingInOnePart;
import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.strings;

import dev.idemkit.domain.Generators.Cut;
import dev.idemkit.domain.Generators.Request;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class FingerprintProperties {

    private static String sha256Hex(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    /** Law: a fingerprint is deterministic, 64 lowercase hex characters, and is the SHA-256 of the bytes. */
    @Test
    void aFingerprintIsTheDeterministicLowercaseHexSha256() {
        qt().withExamples(1000).forAll(anyBytes()).checkAssert(bytes -> {
            Fingerprint f = Fingerprint.of(bytes);
            assertThat(f.hex()).matches("[0-9a-f]{64}").isEqualTo(sha256Hex(bytes));
            assertThat(Fingerprint.of(bytes.clone())).isEqualTo(f);
            assertThat(DedupId.ofContent(bytes).value()).isEqualTo(f.hex());
        });
    }

    /** Law: two byte arrays have the same fingerprint exactly when they are equal. */
    @Test
    void differentBytesGiveDifferentFingerprints() {
        qt().withExamples(1000).forAll(anyBytes(), anyBytes()).checkAssert((a, b) ->
                assertThat(Fingerprint.of(a).equals(Fingerprint.of(b))).isEqualTo(Arrays.equals(a, b)));
    }

    /** Law: the fingerprint of a text is the fingerprint of its UTF-8 bytes. */
    @Test
    void aTextIsFingerprintedAsItsUtf8Bytes() {
        qt().withExamples(1000).forAll(anyText()).checkAssert(text ->
                assertThat(Fingerprint.of(text)).isEqualTo(Fingerprint.of(text.getBytes(StandardCharsets.UTF_8))));
    }

    /** Law: two requests that differ in method, path or body have different fingerprints; equal ones, equal. */
    @Test
    void requestsThatDifferInAnyPartHaveDifferentFingerprints() {
        qt().withExamples(1000).forAll(anyRequest(), anyRequest()).checkAssert((a, b) -> {
            boolean same = a.method().equals(b.method()) && a.path().equals(b.path())
                    && Arrays.equals(a.body(), b.body());
            assertThat(a.fingerprint().equals(b.fingerprint())).isEqualTo(same);
            assertThat(a.fingerprint()).isEqualTo(new Request(a.method(), a.path(), a.body().clone()).fingerprint());
        });
    }

    /** Law: changing only the method, only the path or only the body always changes the request fingerprint. */
    @Test
    void changingAnyOnePartOfARequestChangesItsFingerprint() {
        qt().withExamples(1000).forAll(requestsDifferingInOnePart()).checkAssert(pair ->
                assertThat(pair.changed().fingerprint()).as("only the %s changed", pair.changedPart())
                        .isNotEqualTo(pair.original().fingerprint()));
    }

    /** Law: cutting the same text into (method, path, body) at different places never gives the same fingerprint. */
    @Test
    void movingABoundaryBetweenPartsChangesTheFingerprint() {
        qt().withExamples(1000).forAll(strings().basicLatinAlphabet().ofLengthBetween(0, 30), cuts(), cuts())
                .checkAssert((text, a, b) -> {
                    Fingerprint cutA = split(text, a);
                    Fingerprint cutB = split(text, b);
                    boolean sameCut = Math.min(a.first(), text.length()) == Math.min(b.first(), text.length())
                            && Math.min(a.second(), text.length()) == Math.min(b.second(), text.length());
                    assertThat(cutA.equals(cutB)).isEqualTo(sameCut);
                });
    }

    private static Fingerprint split(String text, Cut cut) {
        int first = Math.min(cut.first(), text.length());
        int second = Math.min(cut.second(), text.length());
        return Fingerprint.ofRequest(text.substring(0, first), text.substring(first, second),
                text.substring(second).getBytes(StandardCharsets.UTF_8));
    }
}
