package dev.idemkit.adapters.redis;

/**
 * The Idempotency-Key record scripts. A record is one hash: s (P|C), f (fingerprint), g (the claim's fence),
 * cs/cn (createdAt epoch seconds/nanos), es/en (expiresAt), and when completed st (status), h (headers), b (body
 * bytes). Every time is Redis' own ({@code TIME}), and a record lives exactly as long as its key: the key's TTL is
 * the claim's lease, or the completed response's TTL, so expiry is decided by Redis' clock alone and a record that
 * exists is live. Callers' clocks are never read.
 */
final class RecordScripts {
    private RecordScripts() {}

    /** Shared prologue: {@code stamp(ms)} sets es/en to Redis' now + ms and returns the created pair (now). */
    private static final String STAMP = """
            local function stamp(k, ms)
              local t = redis.call('TIME')
              local s, n = tonumber(t[1]), tonumber(t[2]) * 1000
              local extra = n + (ms % 1000) * 1000000
              local es = s + math.floor(ms / 1000) + math.floor(extra / 1000000000)
              local en = extra % 1000000000
              redis.call('HSET', k, 'es', string.format('%d', es), 'en', string.format('%d', en))
              redis.call('PEXPIRE', k, ms)
              return {string.format('%d', s), string.format('%d', n)}
            end
            """;

    /**
     * tryBegin. KEYS[1]; ARGV f, fence, lease ms. Returns {@code {'held', <HGETALL>...}} when a record exists (it
     * is live: its TTL has not run out), otherwise claims and returns {@code {'claimed', <HGETALL>...}}.
     */
    static final String BEGIN = STAMP + """
            if redis.call('EXISTS', KEYS[1]) == 1 then
              local r = redis.call('HGETALL', KEYS[1])
              table.insert(r, 1, 'held')
              return r
            end
            redis.call('HSET', KEYS[1], 's', 'P', 'f', ARGV[1], 'g', ARGV[2])
            local now = stamp(KEYS[1], tonumber(ARGV[3]))
            redis.call('HSET', KEYS[1], 'cs', now[1], 'cn', now[2])
            local r = redis.call('HGETALL', KEYS[1])
            table.insert(r, 1, 'claimed')
            return r
            """;

    /** The in-progress record of the fence in ARGV[1] is still there (and so live). */
    private static final String OURS = """
            local r = redis.call('HMGET', KEYS[1], 's', 'g')
            local ours = r[1] == 'P' and r[2] == ARGV[1]
            """;

    /** renew. KEYS[1]; ARGV fence, lease ms. Returns 1 when the lease runs again from Redis' now, 0 when lost. */
    static final String RENEW = STAMP + OURS + """
            if not ours then return 0 end
            stamp(KEYS[1], tonumber(ARGV[2]))
            return 1
            """;

    /** complete. KEYS[1]; ARGV fence, st, h, b, ttl ms. Returns 1 when stored, 0 when the claim was lost. */
    static final String COMPLETE = STAMP + OURS + """
            if not ours then return 0 end
            redis.call('HSET', KEYS[1], 's', 'C', 'st', ARGV[2], 'h', ARGV[3], 'b', ARGV[4])
            stamp(KEYS[1], tonumber(ARGV[5]))
            return 1
            """;

    /**
     * complete with staged writes. KEYS[1] the record, KEYS[1 + i] staged write i's key; ARGV fence, st, h, b, ttl ms,
     * n, then (op, x, y) per staged write ({@link StagedWriteScripts}). Only while the claim is ours: checks every
     * write first, then applies them, then completes the record, all in this one script. Returns {@code OK};
     * {@code LOST} (not ours: nothing written; also what a resend of this very call gets, once it took effect); a
     * check's or the server's refusal ({@code WRONGTYPE i}, {@code NOTINT i}, {@code OVERFLOW i}, {@code REFUSED
     * <error>}): nothing written, and the claim released, so a retry may run — unless the server refused that too, and
     * then the answer ends in {@code HELD} and the claim lapses after its lease; or {@code PARTIAL i <error>} when
     * write i failed although the check passed (an ACL; i = n + 1 is the completion itself): the earlier writes stay,
     * and the record stays in progress for good (no TTL) under a fence no request holds ({@code partial}, with field
     * {@code x} naming i), so no renewal, completion or release matches it and no retry runs the effect again until an
     * operator deletes it.
     */
    static final String COMPLETE_STAGED = STAMP + StagedWriteScripts.FUNCTIONS + OURS + """
            if not ours then return 'LOST' end
            local function refused(verdict)
              if failed(redis.pcall('DEL', KEYS[1])) then return verdict .. ' HELD' end
              return verdict
            end
            local function partial(i, err)
              redis.pcall('PERSIST', KEYS[1])
              redis.pcall('HSET', KEYS[1], 'g', 'partial', 'x', tostring(i))
              return 'PARTIAL ' .. i .. ' ' .. err
            end
            local n = tonumber(ARGV[6])
            local verdict = check(1, 4, n)
            if verdict ~= 'OK' then return refused(verdict) end
            for i = 1, n do
              local w = write(1, 4, i)
              if failed(w) then
                if i == 1 then return refused('REFUSED ' .. w['err']) end
                return partial(i, w['err'])
              end
            end
            local done = redis.pcall('HSET', KEYS[1], 's', 'C', 'st', ARGV[2], 'h', ARGV[3], 'b', ARGV[4])
            if failed(done) then
              if n == 0 then return refused('REFUSED ' .. done['err']) end
              return partial(n + 1, done['err'])
            end
            stamp(KEYS[1], tonumber(ARGV[5]))
            return 'OK'
            """;

    /**
     * apply staged writes of a request without a key. KEYS[1] the unit's own mark (in its slot), KEYS[1 + i] staged
     * write i's key; ARGV mark ms, n, then (op, x, y) per write. The mark is set first, if absent: a resend of this
     * very call (Redisson resends a script that timed out) finds it and writes nothing again ({@code APPLIED}).
     * Returns {@code OK}, {@code APPLIED}, a check's refusal (nothing written, the mark taken back), or
     * {@code PARTIAL i <error>}.
     */
    static final String APPLY = StagedWriteScripts.FUNCTIONS + """
            local mark = redis.pcall('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1])
            if failed(mark) then return 'REFUSED ' .. mark['err'] end
            if not mark then return 'APPLIED' end
            local n = tonumber(ARGV[2])
            local verdict = check(1, 0, n)
            if verdict ~= 'OK' then
              redis.pcall('DEL', KEYS[1])
              return verdict
            end
            for i = 1, n do
              local w = write(1, 0, i)
              if failed(w) then
                if i == 1 then
                  redis.pcall('DEL', KEYS[1])
                  return 'REFUSED ' .. w['err']
                end
                return 'PARTIAL ' .. i .. ' ' .. w['err']
              end
            end
            return 'OK'
            """;

    /** release. KEYS[1]; ARGV fence. Deletes only that in-progress record; returns 1 when deleted. */
    static final String RELEASE = OURS + """
            if not ours then return 0 end
            return redis.call('DEL', KEYS[1])
            """;
}
