--[[
  Reserves a request's estimated cost in every budget window that applies to it,
  in the tenant's credit account and in its queue of outstanding reservations —
  in all of them or in none. Expired reservations are reaped first.

  KEYS[1]        the tenant's outstanding reservations (sorted set: requestId → expiry ms)
  KEYS[2…]       pairs: counter hash (spent | balance, reserved, r:<requestId>),
                 its expiry sorted set (requestId → expiry ms); the windows first,
                 then the credit account when ARGV[7] is 1
  ARGV[1]        now, ms
  ARGV[2]        request id
  ARGV[3]        estimate, integer micro-units
  ARGV[4]        the reservation's expiry, ms
  ARGV[5]        most outstanding reservations (-1: no cap)
  ARGV[6]        number of window pairs, W
  ARGV[7]        1 when the last pair is the credit account, else 0
  ARGV[8…]       per window: limit (micro-units), lifetime of its keys (ms)

  Lifetimes are relative, so that Redis's clock never meets the caller's (tests move the latter).

  A missing counter hash is never read as zero: nothing changes and the caller
  rebuilds it from the store.

  Returns {'missing', pair index…} | {'budget', index of each exhausted window…} | {'credit', balance − reserved}
        | {'queue_full', outstanding} | {'ok', outstanding including this one}; indexes 1-based.
]]
-- Integer strings: Lua would send -0 or 1e+17, which HINCRBY rejects.
local function incr(hash, name, amount)
  redis.call('HINCRBY', hash, name, string.format('%d', amount))
end

local now = tonumber(ARGV[1])
local id = ARGV[2]
local field = 'r:' .. id
local estimate = tonumber(ARGV[3])
local windows = tonumber(ARGV[6])
local slots = (#KEYS - 1) / 2

local missing = { 'missing' }
for i = 1, slots do
  if redis.call('EXISTS', KEYS[2 * i]) == 0 then missing[#missing + 1] = i end
end
if #missing > 1 then return missing end

local function reap(hash, expiries)
  local expired = redis.call('ZRANGEBYSCORE', expiries, '-inf', now)
  for _, member in ipairs(expired) do
    local amount = redis.call('HGET', hash, 'r:' .. member)
    if amount then
      incr(hash, 'reserved', -tonumber(amount))
      redis.call('HDEL', hash, 'r:' .. member)
    end
  end
  if #expired > 0 then redis.call('ZREMRANGEBYSCORE', expiries, '-inf', now) end
end

-- The counter's value and what others reserved: a repeated reserve replaces its own amount.
local function read(hash, valueField)
  local values = redis.call('HMGET', hash, valueField, 'reserved', field)
  return tonumber(values[1] or '0'), tonumber(values[2] or '0') - tonumber(values[3] or '0')
end

for i = 1, slots do reap(KEYS[2 * i], KEYS[2 * i + 1]) end
local exhausted = { 'budget' }
for i = 1, windows do
  local spent, reserved = read(KEYS[2 * i], 'spent')
  if spent + reserved + estimate > tonumber(ARGV[6 + 2 * i]) then exhausted[#exhausted + 1] = i end
end
if #exhausted > 1 then return exhausted end
if ARGV[7] == '1' then
  local balance, reserved = read(KEYS[2 * slots], 'balance')
  if balance - reserved - estimate < 0 then return { 'credit', balance - reserved } end
end

redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local cap = tonumber(ARGV[5])
local queued = redis.call('ZCARD', KEYS[1])
if redis.call('ZSCORE', KEYS[1], id) then queued = queued - 1 end
if cap >= 0 and queued >= cap then return { 'queue_full', queued } end

for i = 1, slots do
  local hash, expiries = KEYS[2 * i], KEYS[2 * i + 1]
  local old = tonumber(redis.call('HGET', hash, field) or '0')
  redis.call('HSET', hash, field, ARGV[3])
  incr(hash, 'reserved', estimate - old)
  redis.call('ZADD', expiries, ARGV[4], id)
  -- The credit's expiry set must outlive its members: they are what frees the credit's reservations.
  if i <= windows then redis.call('PEXPIRE', expiries, ARGV[7 + 2 * i]) end
end
redis.call('ZADD', KEYS[1], ARGV[4], id)
local latest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIRE', KEYS[1], string.format('%d', tonumber(latest[2]) - now))
return { 'ok', redis.call('ZCARD', KEYS[1]) }
