--[[
  Reads budget counters for a snapshot, reaping expired reservations first.

  KEYS     pairs: counter hash (spent | balance, reserved), its expiry sorted set
  ARGV[1]  now, ms

  Returns per pair {exists (0|1), spent, balance, reserved} (fields may be false).
]]
-- Integer strings: Lua would send -0 or 1e+17, which HINCRBY rejects.
local function incr(hash, name, amount)
  redis.call('HINCRBY', hash, name, string.format('%d', amount))
end

local now = tonumber(ARGV[1])
local result = {}
for i = 1, #KEYS / 2 do
  local hash, expiries = KEYS[2 * i - 1], KEYS[2 * i]
  local exists = redis.call('EXISTS', hash)
  if exists == 1 then
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
  local values = redis.call('HMGET', hash, 'spent', 'balance', 'reserved')
  result[#result + 1] = { exists, values[1], values[2], values[3] }
end
return result
