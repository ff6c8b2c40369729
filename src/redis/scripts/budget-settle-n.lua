--[[
  Settles a request once: frees its reservations and charges its actual cost to
  every window (spent) and to the credit account (balance). The cost is charged
  even when the reservation already expired, because it was still incurred. A
  counter that is missing stays missing: the next reserve rebuilds it from the
  store, which holds this request's usage record; creating it here would
  restart the window at this one cost.

  KEYS[1]  the request's settled marker
  KEYS[2]  the tenant's outstanding reservations (sorted set)
  KEYS[3…] pairs: counter hash, its expiry sorted set; the windows first, then
           the credit account when ARGV[4] is 1
  ARGV[1]  request id
  ARGV[2]  actual cost, integer micro-units (0: release only)
  ARGV[3]  lifetime of the settled marker, ms
  ARGV[4]  1 when the last pair is the credit account, else 0

  Returns 1 when settled now, 0 when it had been settled before.
]]
-- Integer strings: Lua would send -0 or 1e+17, which HINCRBY rejects.
local function incr(hash, name, amount)
  redis.call('HINCRBY', hash, name, string.format('%d', amount))
end

if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local id = ARGV[1]
local field = 'r:' .. id
local actual = tonumber(ARGV[2])
local slots = (#KEYS - 2) / 2

for i = 1, slots do
  local hash, expiries = KEYS[2 * i + 1], KEYS[2 * i + 2]
  if redis.call('EXISTS', hash) == 1 then
    local amount = redis.call('HGET', hash, field)
    if amount then
      incr(hash, 'reserved', -tonumber(amount))
      redis.call('HDEL', hash, field)
    end
    if ARGV[4] == '1' and i == slots then
      incr(hash, 'balance', -actual)
    else
      incr(hash, 'spent', actual)
    end
  end
  redis.call('ZREM', expiries, id)
end
redis.call('ZREM', KEYS[2], id)
redis.call('SET', KEYS[1], 1, 'PX', ARGV[3])
return 1
