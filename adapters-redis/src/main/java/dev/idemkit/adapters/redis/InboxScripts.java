package dev.idemkit.adapters.redis;

/**
 * The inbox's Lua scripts. Each call is one atomic step on the server and one round trip; all keys of one call
 * are in one cluster slot (the callers group them by slot). A single delivery is a call with one key; a bulk
 * batch is a call with many, so the server does the work of a whole batch in one script instead of one
 * {@code EVALSHA} per key.
 */
final class InboxScripts {
    private InboxScripts() {}

    /**
     * Claim. KEYS[i] inbox keys; ARGV[1] lease ms, ARGV[i + 1] the in-progress value {@code P:<token>:<fingerprint>}
     * for KEYS[i]. Returns one string per key: empty when this caller now holds the claim (it was absent, and is now
     * set with the lease), otherwise the value already there. A key given twice is claimed by its first occurrence.
     * On Redis 7 and later each key is one {@code SET NX PX GET}; before 7 (no {@code REDIS_VERSION_NUM}, and SET
     * cannot combine NX with GET) a GET then a SET, which the script makes just as atomic.
     */
    static final String CLAIM = """
            local out = {}
            local setNxGet = (redis.REDIS_VERSION_NUM or 0) >= 0x070000
            for i = 1, #KEYS do
              local v
              if setNxGet then
                v = redis.pcall('SET', KEYS[i], ARGV[i + 1], 'NX', 'PX', ARGV[1], 'GET')
              else
                v = redis.pcall('GET', KEYS[i])
                if not v then v = redis.pcall('SET', KEYS[i], ARGV[i + 1], 'PX', ARGV[1]); if v['ok'] then v = false end end
              end
              if type(v) == 'table' and v['err'] then out[i] = '!' .. v['err'] else out[i] = v or '' end
            end
            return out
            """;

    /**
     * Complete. For each delivery d, in order: KEYS holds its inbox key then its staged keys; ARGV (after ARGV[1],
     * the retention ms) holds {@code expected}, the completed value {@code C:<fingerprint>}, the number of staged
     * writes n, then three arguments (op, a, b) per staged write.
     *
     * <p>{@code expected} is our in-progress value (complete our claim), or empty (claim and complete in one step,
     * only if the key is absent). Returns one string per delivery: {@code OK} when its writes and its completion are
     * applied; {@code LOST} when the claim is no longer ours; {@code V:<value there>} when {@code expected} was
     * empty and the key is present; {@code WRONGTYPE i} / {@code NOTINT i} / {@code OVERFLOW i} when staged write i
     * cannot apply. Those are decided before any write, on the state the delivery's own earlier writes would leave
     * (a SET or HSET then an INCRBY of the same counter, a DEL then a write of another type), with Redis' own integer
     * syntax (no leading zeros, no "-0") and a bound of +-9.2e18 (a little inside the 64-bit range, as Lua counts in
     * doubles): every result but OK and PARTIAL means nothing of that delivery was written.
     *
     * <p>Every read and write is {@code redis.pcall}ed, so a failure stays with its own delivery: the deliveries
     * before and after it in the same call get their own answers. {@code BADKEY <error>}: the inbox key holds another
     * type. {@code REFUSED <error>}: the server refused a read of the check or the unit's first write (out of memory,
     * a read-only replica, an ACL); nothing of the unit is written (a mark already set is taken back). {@code PARTIAL
     * i <error>}: write i failed although the check passed (only an ACL is known to do it; i = n + 1 is the completion
     * itself); the earlier writes are applied, and the key holds {@code X:<fingerprint>} without a TTL: it was marked
     * before the first staged write, so no redelivery ever runs the unit again until an operator deletes the key.
     */
    static final String COMPLETE = StagedWriteScripts.FUNCTIONS + """
            local function apply(k, a, n, key, expected, done)
              if n > 0 then
                -- marked first (keeping the claim's TTL): should a staged write fail, the key already says
                -- "partially applied" and no redelivery runs the unit again
                local m = redis.pcall('SET', key, 'X:' .. string.sub(done, 3), 'KEEPTTL')
                if failed(m) then return 'REFUSED ' .. m['err'] end
                for i = 1, n do
                  local r = write(k, a, i)
                  if failed(r) then
                    if i == 1 then -- nothing of the unit applied: take the mark back
                      if expected == '' then redis.pcall('DEL', key) else redis.pcall('SET', key, expected, 'KEEPTTL') end
                      return 'REFUSED ' .. r['err']
                    end
                    redis.pcall('PERSIST', key)
                    return 'PARTIAL ' .. i .. ' ' .. r['err']
                  end
                end
              end
              local r = redis.pcall('SET', key, done, 'PX', ARGV[1])
              if failed(r) then
                if n == 0 then return 'REFUSED ' .. r['err'] end
                redis.pcall('PERSIST', key)
                return 'PARTIAL ' .. (n + 1) .. ' ' .. r['err']
              end
              return 'OK'
            end
            local out, k, a, d = {}, 1, 2, 0
            while a <= #ARGV do
              d = d + 1
              local key, expected, done, n = KEYS[k], ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2])
              local cur = redis.pcall('GET', key)
              local result = 'OK'
              if type(cur) == 'table' and cur['err'] then
                result = 'BADKEY ' .. cur['err']
              elseif expected == '' then
                if cur then result = 'V:' .. cur end
              elseif cur ~= expected then
                result = 'LOST'
              end
              if result == 'OK' then result = check(k, a, n) end
              if result == 'OK' then result = apply(k, a, n, key, expected, done) end
              out[d] = result
              k = k + 1 + n
              a = a + 3 + 3 * n
            end
            return out
            """;

    /** Release. KEYS[1] inbox key; ARGV[1] our in-progress value. Deletes only our own claim; returns 1 when deleted. */
    static final String RELEASE = """
            if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
            return 0
            """;
}
