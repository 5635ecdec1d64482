package dev.idemkit.domain;

/**
 * A content-derived deduplication id: the hex SHA-256 of a message's canonical body, used as the
 * broker-side deduplication id (SQS FIFO {@code MessageDeduplicationId}) when the caller gives none.
 * Canonicalisation (e.g. sorted JSON keys) is the caller's: this type hashes exactly the bytes given.
 */
public record DedupId(String value) {
    public DedupId {
        KeyRules.requireValid("deduplication id", value);
        if (value.length() > 128) {
            throw new InvalidKeyException("deduplication id is " + value.length() + " characters (rule: at most 128)");
        }
    }

    public static DedupId ofContent(byte[] canonicalBody) {
        return new DedupId(Fingerprint.of(canonicalBody).hex());
    }
}
