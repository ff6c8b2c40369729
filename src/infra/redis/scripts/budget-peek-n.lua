--[[
  Reads budget counters for a snapshot, reaping expired reservations first.

  KEYS     pairs: counter hash (spent | balance, reserved), its expiry sorted set
  ARGV[1]  now, ms

  Returns per pair {exists (0|1), spent, balance, reserved} (fields may be false). A counter
  exists once seeded, when it has its value: one that holds only the costs of requests settled
  while it was missing (settle.inc.lua) is still to be rebuilt.
]]
-- #include counters

local now = tonumber(ARGV[1])
local result = {}
for i = 1, #KEYS / 2 do
  local hash, expiries = KEYS[2 * i - 1], KEYS[2 * i]
  local exists = (redis.call('HEXISTS', hash, 'spent') == 1 or redis.call('HEXISTS', hash, 'balance') == 1) and 1 or 0
  if exists == 1 then reap(hash, expiries, now) end
  local values = redis.call('HMGET', hash, 'spent', 'balance', 'reserved')
  result[#result + 1] = { exists, values[1], values[2], values[3] }
end
return result
