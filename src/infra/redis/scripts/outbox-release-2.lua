--[[
  Gives leased records back to the outbox at once (their write failed), to be taken
  again before anything newer.

  KEYS[1]  outbox items (list)
  KEYS[2]  leases (sorted set)
  ARGV     the records

  Returns the number of records released.
]]
local released = 0
for i = #ARGV, 1, -1 do
  if redis.call('ZREM', KEYS[2], ARGV[i]) == 1 then
    redis.call('RPUSH', KEYS[1], ARGV[i])
    released = released + 1
  end
end
return released
