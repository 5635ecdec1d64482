package dev.idemkit.adapters.redis;

/**
 * The Lua functions that check and apply the writes an effect staged in a {@link RedisUnitOfWork}, shared by the
 * inbox's completion ({@link InboxScripts#COMPLETE}) and the Idempotency-Key record's ({@link RecordScripts}).
 * Staged write {@code i} of a unit whose keys start after {@code KEYS[k]} and whose arguments start after
 * {@code ARGV[a]} is {@code KEYS[k + i]} with op, x, y at {@code ARGV[a + 3i]}, {@code ARGV[a + 3i + 1]},
 * {@code ARGV[a + 3i + 2]}.
 *
 * <ul>
 *   <li>{@code check(k, a, n)}: {@code 'OK'} when all n writes can apply, decided before any write on the state the
 *       unit's own earlier writes would leave; else {@code WRONGTYPE i}, {@code NOTINT i}, {@code OVERFLOW i},
 *       {@code BADOP i} or {@code REFUSED <error>} (the server refused a read).
 *   <li>{@code write(k, a, i)}: applies write i with {@code redis.pcall}; a table with {@code err} when it failed.
 *   <li>{@code failed(r)}: whether a pcall's answer is an error.
 * </ul>
 */
final class StagedWriteScripts {
    private StagedWriteScripts() {}

    static final String FUNCTIONS = """
            local family = {SET='string', INCRBY='string', HSET='hash', HINCRBY='hash', SADD='set'}
            local function isint(v) return v == '0' or (#v <= 20 and string.match(v, '^%-?[1-9]%d*$') ~= nil) end
            local function failed(r) return type(r) == 'table' and r['err'] end
            local function check(k, a, n)
              local types, vals, cleared = {}, {}, {}
              for i = 1, n do
                local sk, op, x, y = KEYS[k + i], ARGV[a + 3 * i], ARGV[a + 3 * i + 1], ARGV[a + 3 * i + 2]
                local t = types[sk]
                if not t then
                  local r = redis.pcall('TYPE', sk)
                  if failed(r) then return 'REFUSED ' .. r['err'] end
                  t = r['ok']
                end
                if op ~= 'DEL' and not family[op] then return 'BADOP ' .. i end
                if op == 'DEL' or op == 'SET' then
                  -- SET replaces a key of any type, like DEL then a write
                  types[sk], vals[sk], cleared[sk] = (op == 'SET' and 'string' or 'none'), (op == 'SET' and x or false), true
                  for c in pairs(vals) do
                    if string.sub(c, 1, #sk + 1) == sk .. ' ' then vals[c] = nil end
                  end
                else
                  if t ~= 'none' and t ~= family[op] then return 'WRONGTYPE ' .. i end
                  types[sk] = family[op]
                  if op == 'HSET' then vals[sk .. ' ' .. x] = y
                  elseif op == 'INCRBY' or op == 'HINCRBY' then
                    local c = op == 'INCRBY' and sk or (sk .. ' ' .. x)
                    local v = vals[c]
                    if v == nil then
                      if cleared[sk] or t == 'none' then v = false
                      elseif op == 'INCRBY' then v = redis.pcall('GET', sk)
                      else v = redis.pcall('HGET', sk, x) end
                      if failed(v) then return 'REFUSED ' .. v['err'] end
                    end
                    if type(v) == 'string' and not isint(v) then return 'NOTINT ' .. i end
                    local sum = (v and tonumber(v) or 0) + tonumber(op == 'INCRBY' and x or y)
                    if math.abs(sum) >= 9.2e18 then return 'OVERFLOW ' .. i end
                    vals[c] = sum
                  end
                end
              end
              return 'OK'
            end
            local function write(k, a, i)
              local sk, op, x, y = KEYS[k + i], ARGV[a + 3 * i], ARGV[a + 3 * i + 1], ARGV[a + 3 * i + 2]
              if op == 'SET' then
                if y == '' then return redis.pcall('SET', sk, x) end
                return redis.pcall('SET', sk, x, 'PX', y)
              elseif op == 'INCRBY' then return redis.pcall('INCRBY', sk, x)
              elseif op == 'HSET' then return redis.pcall('HSET', sk, x, y)
              elseif op == 'HINCRBY' then return redis.pcall('HINCRBY', sk, x, y)
              elseif op == 'SADD' then return redis.pcall('SADD', sk, x)
              elseif op == 'DEL' then return redis.pcall('DEL', sk)
              end
              return {err = 'BADOP ' .. tostring(op)}
            end
            """;
}
