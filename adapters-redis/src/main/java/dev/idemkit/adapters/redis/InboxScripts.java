package dev.idemkit.adapters.redis;

/** The inbox's Lua scripts. Each is one atomic step on the server, one round trip, and touches keys of one slot. */
final class InboxScripts {
    private InboxScripts() {}

    /**
     * Claim. KEYS[1] inbox key; ARGV[1] in-progress value {@code P:<token>:<fingerprint>}, ARGV[2] lease ms.
     * Returns nil when this caller now holds the claim (SET NX PX), otherwise the value already there.
     */
    static final String CLAIM = """
            local v = redis.call('GET', KEYS[1])
            if v then return v end
            redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
            return false
            """;

    /**
     * Complete. KEYS[1] inbox key, KEYS[2..] staged keys; ARGV[1] our in-progress value, ARGV[2] completed value
     * {@code C:<fingerprint>}, ARGV[3] retention ms, then three arguments (op, a, b) per staged write.
     * Returns LOST when the claim is no longer ours (nothing written); WRONGTYPE i / NOTINT i when staged write i
     * cannot apply (checked before any write: nothing written); OK when the writes and the completion are applied.
     */
    static final String COMPLETE = """
            if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'LOST' end
            local family = {SET='string', INCRBY='string', HSET='hash', HINCRBY='hash', SADD='set', DEL='any'}
            local n = #KEYS - 1
            for i = 1, n do
              local k, op, a = KEYS[i + 1], ARGV[3 * i + 1], ARGV[3 * i + 2]
              local t = redis.call('TYPE', k)['ok']
              if t ~= 'none' and family[op] ~= 'any' and t ~= family[op] then return 'WRONGTYPE ' .. i end
              if op == 'INCRBY' and t == 'string' and not string.match(redis.call('GET', k), '^%-?%d+$') then
                return 'NOTINT ' .. i
              end
              if op == 'HINCRBY' and t == 'hash' then
                local f = redis.call('HGET', k, a)
                if f and not string.match(f, '^%-?%d+$') then return 'NOTINT ' .. i end
              end
            end
            for i = 1, n do
              local k, op, a, b = KEYS[i + 1], ARGV[3 * i + 1], ARGV[3 * i + 2], ARGV[3 * i + 3]
              if op == 'SET' then
                if b == '' then redis.call('SET', k, a) else redis.call('SET', k, a, 'PX', b) end
              elseif op == 'INCRBY' then redis.call('INCRBY', k, a)
              elseif op == 'HSET' then redis.call('HSET', k, a, b)
              elseif op == 'HINCRBY' then redis.call('HINCRBY', k, a, b)
              elseif op == 'SADD' then redis.call('SADD', k, a)
              elseif op == 'DEL' then redis.call('DEL', k)
              end
            end
            redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
            return 'OK'
            """;

    /** Release. KEYS[1] inbox key; ARGV[1] our in-progress value. Deletes only our own claim; returns 1 when deleted. */
    static final String RELEASE = """
            if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
            return 0
            """;
}
