package dev.idemkit.adapters.redis;

/**
 * The Idempotency-Key record scripts. A record is one hash: s (P|C), f (fingerprint), cs/cn (createdAt epoch
 * seconds/nanos), es/en (expiresAt), and when completed st (status), h (headers), b (body bytes). Expiry is
 * decided on the caller's {@code now}, compared as (seconds, nanos); the Redis TTL only removes what is dead.
 */
final class RecordScripts {
    private RecordScripts() {}

    /** Live iff now < expiresAt. Shared prologue: {@code live(key, nowSeconds, nowNanos)}. */
    private static final String LIVE = """
            local function live(k, ns, nn)
              local e = redis.call('HMGET', k, 'es', 'en')
              if not e[1] then return false end
              local es, en = tonumber(e[1]), tonumber(e[2])
              return ns < es or (ns == es and nn < en)
            end
            """;

    /**
     * tryBegin. KEYS[1]; ARGV now_s, now_n, f, cs, cn, es, en, ttl ms. Returns the live record's fields (HGETALL),
     * or an empty list when the caller now holds the claim.
     */
    static final String BEGIN = LIVE + """
            if live(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])) then return redis.call('HGETALL', KEYS[1]) end
            redis.call('DEL', KEYS[1])
            redis.call('HSET', KEYS[1], 's', 'P', 'f', ARGV[3], 'cs', ARGV[4], 'cn', ARGV[5], 'es', ARGV[6], 'en', ARGV[7])
            redis.call('PEXPIRE', KEYS[1], ARGV[8])
            return {}
            """;

    /** The in-progress record identified by ARGV f, cs, cn (1..3) is still there. */
    private static final String OURS = """
            local r = redis.call('HMGET', KEYS[1], 's', 'f', 'cs', 'cn')
            local ours = r[1] == 'P' and r[2] == ARGV[1] and r[3] == ARGV[2] and r[4] == ARGV[3]
            """;

    /** complete. KEYS[1]; ARGV f, cs, cn, st, h, b, es, en, ttl ms. Returns 1 when stored, 0 when the claim was lost. */
    static final String COMPLETE = OURS + """
            if not ours then return 0 end
            redis.call('HSET', KEYS[1], 's', 'C', 'st', ARGV[4], 'h', ARGV[5], 'b', ARGV[6], 'es', ARGV[7], 'en', ARGV[8])
            redis.call('PEXPIRE', KEYS[1], ARGV[9])
            return 1
            """;

    /** release. KEYS[1]; ARGV f, cs, cn. Deletes only that in-progress record; returns 1 when deleted. */
    static final String RELEASE = OURS + """
            if not ours then return 0 end
            return redis.call('DEL', KEYS[1])
            """;

    /** purge one. KEYS[1]; ARGV now_s, now_n. Deletes the record when it is expired at now; returns 1 when deleted. */
    static final String PURGE = LIVE + """
            if redis.call('EXISTS', KEYS[1]) == 0 or live(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])) then return 0 end
            return redis.call('DEL', KEYS[1])
            """;
}
