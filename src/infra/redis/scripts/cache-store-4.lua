--[[
  Stores one answer in a tenant's response cache and keeps the cache under its size cap. Redis
  runs without eviction, so the cap is this script's bookkeeping: every entry's size and expiry
  are recorded, expired entries are forgotten first, then the oldest are evicted until the new
  one fits. An entry larger than the cap is not stored.

  KEYS[1]  the entry (string)
  KEYS[2]  the tenant's entries by when they were stored (sorted set: digest -> ms)
  KEYS[3]  the tenant's entries by expiry (sorted set: digest -> ms)
  KEYS[4]  the tenant's entry sizes (hash: digest -> bytes, and '#total')
  ARGV[1]  now, ms
  ARGV[2]  the entry's lifetime, ms (> 0)
  ARGV[3]  the tenant's cap, bytes
  ARGV[4]  the prefix of the tenant's entry keys (an entry's key is the prefix and its digest);
           evicted entries are deleted by it: they share the tenant's hash tag, so its slot
  ARGV[5]  the entry's digest
  ARGV[6]  the entry

  Returns { 1 when stored, else 0; the total bytes held after; how many entries were evicted }.
]]
local now = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local cap = tonumber(ARGV[3])
local prefix = ARGV[4]
local digest = ARGV[5]
local value = ARGV[6]
local size = #value
local total = tonumber(redis.call('HGET', KEYS[4], '#total') or '0')
local evicted = 0

local function forget(member)
  total = total - tonumber(redis.call('HGET', KEYS[4], member) or '0')
  redis.call('HDEL', KEYS[4], member)
  redis.call('ZREM', KEYS[2], member)
  redis.call('ZREM', KEYS[3], member)
  redis.call('DEL', prefix .. member)
end

-- Their keys expired by themselves; only the bookkeeping is left. A bounded number per call keeps it short.
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, 100)) do forget(member) end
if redis.call('HEXISTS', KEYS[4], digest) == 1 then forget(digest) end

local stored = 0
if size <= cap then
  while total + size > cap do
    local oldest = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
    -- Nothing left to evict: the total had drifted (a key deleted by hand); it starts again from zero.
    if not oldest then total = 0 break end
    forget(oldest)
    evicted = evicted + 1
  end
  redis.call('SET', KEYS[1], value, 'PX', ttl)
  redis.call('ZADD', KEYS[2], now, digest)
  redis.call('ZADD', KEYS[3], now + ttl, digest)
  redis.call('HSET', KEYS[4], digest, size)
  total = total + size
  stored = 1
end

if total < 0 then total = 0 end
if redis.call('ZCARD', KEYS[3]) == 0 then
  redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
  return { stored, 0, evicted }
end
redis.call('HSET', KEYS[4], '#total', total)
-- The bookkeeping lives as long as its longest-lived entry.
local last = tonumber(redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')[2])
for i = 2, 4 do redis.call('PEXPIREAT', KEYS[i], last) end
return { stored, total, evicted }
