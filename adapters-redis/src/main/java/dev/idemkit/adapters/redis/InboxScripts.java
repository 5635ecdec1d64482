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
                v = redis.call('SET', KEYS[i], ARGV[i + 1], 'NX', 'PX', ARGV[1], 'GET')
              else
                v = redis.call('GET', KEYS[i])
                if not v then redis.call('SET', KEYS[i], ARGV[i + 1], 'PX', ARGV[1]) end
              end
              out[i] = v or ''
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
     * applied; {@code LOST} when the claim is no longer ours; the value already there when {@code expected} was
     * empty and the key is present; {@code WRONGTYPE i} / {@code NOTINT i} / {@code OVERFLOW i} when staged write i
     * cannot apply (wrong type; a counter that is not an integer; a counter that would leave +-9.2e18, a little
     * inside the 64-bit range because Lua counts in doubles, so that INCRBY never fails half-way). Every
     * result but OK means nothing of that delivery was written: its staged writes are all checked before any is
     * applied. Deliveries are independent: one failing does not stop the next.
     */
    static final String COMPLETE = """
            local family = {SET='string', INCRBY='string', HSET='hash', HINCRBY='hash', SADD='set', DEL='any'}
            local out, k, a, d = {}, 1, 2, 0
            while a <= #ARGV do
              d = d + 1
              local key, expected, done, n = KEYS[k], ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2])
              local cur = redis.call('GET', key)
              local result = 'OK'
              if expected == '' then
                if cur then result = cur end
              elseif cur ~= expected then
                result = 'LOST'
              end
              if result == 'OK' then
                local sums = {}
                for i = 1, n do
                  local sk, op, x, y = KEYS[k + i], ARGV[a + 3 * i], ARGV[a + 3 * i + 1], ARGV[a + 3 * i + 2]
                  local t = redis.call('TYPE', sk)['ok']
                  if t ~= 'none' and family[op] ~= 'any' and t ~= family[op] then result = 'WRONGTYPE ' .. i; break end
                  if op == 'INCRBY' or op == 'HINCRBY' then
                    local counter = op == 'INCRBY' and sk or (sk .. ' ' .. x)
                    local sum = sums[counter]
                    if sum == nil then
                      local v = nil
                      if t ~= 'none' then
                        if op == 'INCRBY' then v = redis.call('GET', sk) else v = redis.call('HGET', sk, x) end
                      end
                      if v and not string.match(v, '^%-?%d+$') then result = 'NOTINT ' .. i; break end
                      sum = tonumber(v or '0')
                    end
                    sum = sum + tonumber(op == 'INCRBY' and x or y)
                    if math.abs(sum) >= 9.2e18 then result = 'OVERFLOW ' .. i; break end
                    sums[counter] = sum
                  end
                end
              end
              if result == 'OK' then
                for i = 1, n do
                  local sk, op, x, y = KEYS[k + i], ARGV[a + 3 * i], ARGV[a + 3 * i + 1], ARGV[a + 3 * i + 2]
                  if op == 'SET' then
                    if y == '' then redis.call('SET', sk, x) else redis.call('SET', sk, x, 'PX', y) end
                  elseif op == 'INCRBY' then redis.call('INCRBY', sk, x)
                  elseif op == 'HSET' then redis.call('HSET', sk, x, y)
                  elseif op == 'HINCRBY' then redis.call('HINCRBY', sk, x, y)
                  elseif op == 'SADD' then redis.call('SADD', sk, x)
                  elseif op == 'DEL' then redis.call('DEL', sk)
                  end
                end
                redis.call('SET', key, done, 'PX', ARGV[1])
              end
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
