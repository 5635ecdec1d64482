package dev.idemkit.domain;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * A SHA-256 digest as 64 lowercase hex characters. Tells a redelivery (same fingerprint) from a
 * producer reusing an id for different content (different fingerprint).
 */
public record Fingerprint(String hex) {
    private static final Pattern HEX64 = Pattern.compile("[0-9a-f]{64}");

    public Fingerprint {
        if (hex == null || !HEX64.matcher(hex).matches()) {
            throw new IllegalArgumentException("fingerprint must be 64 lowercase hex characters (SHA-256), got: "
                    + (hex == null ? "null" : hex.length() + " characters"));
        }
    }

    /** The SHA-256 of the given bytes. */
    public static Fingerprint of(byte[] bytes) {
        return new Fingerprint(HexFormat.of().formatHex(sha256().digest(bytes)));
    }

    /** The SHA-256 of the UTF-8 bytes of the given text. */
    public static Fingerprint of(String text) {
        return of(text.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The fingerprint of an HTTP request: SHA-256 over method, path and the canonical body, each part
     * length-prefixed so that no two different triples share an input.
     */
    public static Fingerprint ofRequest(String method, String path, byte[] canonicalBody) {
        MessageDigest md = sha256();
        for (byte[] part : new byte[][] {
                method.getBytes(StandardCharsets.UTF_8), path.getBytes(StandardCharsets.UTF_8), canonicalBody}) {
            md.update(Integer.toString(part.length).getBytes(StandardCharsets.US_ASCII));
            md.update((byte) ':');
            md.update(part);
        }
        return new Fingerprint(HexFormat.of().formatHex(md.digest()));
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform must provide SHA-256", e);
        }
    }

    @Override
    public String toString() {
        return hex;
    }
}
