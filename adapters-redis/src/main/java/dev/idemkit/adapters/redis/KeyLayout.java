package dev.idemkit.adapters.redis;

import dev.idemkit.domain.KeyRules;
import dev.idemkit.domain.httpkey.ScopedKey;
import dev.idemkit.domain.inbox.InboxKey;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.redisson.connection.CRC16;

/**
 * Key names. Every caller-given part (consumer, message id, client id, idempotency key) is base64url-encoded
 * (alphabet {@code A-Za-z0-9-_}), so that no ':' , '{' or '}' in it can shift a separator or a hash tag: the
 * mapping from (client, key) to a Redis key is injective, and a crafted key cannot name another client's record.
 *
 * <pre>
 * &lt;prefix&gt;:inbox:{&lt;b64 consumer&gt;}:&lt;b64 message id&gt;     (hash tag per consumer)
 * &lt;prefix&gt;:inbox:{&lt;b64 consumer&gt;.&lt;b64 message id&gt;}   (hash tag per message)
 * &lt;prefix&gt;:data:{...}:&lt;name&gt;                           (effect keys in the claim's slot)
 * &lt;prefix&gt;:idem:{&lt;b64 client&gt;.&lt;b64 key&gt;}                (Idempotency-Key records)
 * </pre>
 */
final class KeyLayout {
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
    private final String prefix;
    private final RedisSettings.HashTagScope scope;
    private final String inboxPrefix;
    private final String recordPrefix;

    KeyLayout(String prefix, RedisSettings.HashTagScope scope) {
        this.prefix = prefix;
        this.scope = scope;
        this.inboxPrefix = prefix + ":inbox:";
        this.recordPrefix = prefix + ":idem:";
    }

    String inbox(InboxKey key) {
        String c = enc(key.consumer().value());
        String m = enc(key.messageId().value());
        return scope == RedisSettings.HashTagScope.CONSUMER
                ? prefix + ":inbox:{" + c + "}:" + m
                : prefix + ":inbox:{" + c + "." + m + "}";
    }

    /** A key for effect data in the slot of {@code tag} (a {@code {...}} hash tag). */
    String data(String tag, String name) {
        KeyRules.requireValid("data key name", name);
        return prefix + ":data:" + tag + ":" + name;
    }

    String record(ScopedKey key) {
        return prefix + ":idem:{" + enc(key.client().value()) + "." + enc(key.key().value()) + "}";
    }

    /** Whether {@code key} is one of the stores' own keys (inbox, Idempotency-Key records), which no effect may write. */
    boolean isStoreKey(String key) {
        return key.startsWith(inboxPrefix) || key.startsWith(recordPrefix);
    }

    static String enc(String value) {
        return B64.encodeToString(value.getBytes(StandardCharsets.US_ASCII));
    }

    /** The hash tag of {@code key}, braces included, as Redis Cluster defines it; the whole key when it has none. */
    static String hashTag(String key) {
        int open = key.indexOf('{');
        if (open >= 0) {
            int close = key.indexOf('}', open + 1);
            if (close > open + 1) {
                return key.substring(open, close + 1);
            }
        }
        return key;
    }

    /** The cluster slot of {@code key} (CRC16 of its hash tag content, mod 16384). */
    static int slot(String key) {
        String tag = hashTag(key);
        String hashed = tag.equals(key) ? key : tag.substring(1, tag.length() - 1);
        return CRC16.crc16(hashed.getBytes(StandardCharsets.UTF_8)) % 16384;
    }
}
