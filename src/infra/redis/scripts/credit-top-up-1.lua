--[[
  Brings the tenant's credit balance in Redis up to the store's top-ups, if that counter exists
  (has its balance: one being rebuilt does not); otherwise the next rebuild reads every top-up
  from the store.

  The counter keeps `topped_up`, the sum of top-ups its balance includes, and each call raises the
  balance by what the store's sum has beyond it: a top-up sent twice, or one whose store write is
  seen by another top-up's call first, raises it once, in whatever order the calls arrive.

  KEYS[1]  the credit account hash
  ARGV[1]  the sum of the tenant's top-ups in the store, read after this one was stored
  ARGV[2]  this top-up's amount: what a counter rebuilt before `topped_up` was kept is raised by

  Returns the amount the balance was raised by (0: the counter is missing, or already had it).
]]
if redis.call('HEXISTS', KEYS[1], 'balance') == 0 then return 0 end
local total = tonumber(ARGV[1])
local seen = tonumber(redis.call('HGET', KEYS[1], 'topped_up'))
local raise = seen and (total - seen) or tonumber(ARGV[2])
if raise <= 0 then return 0 end
redis.call('HINCRBY', KEYS[1], 'balance', raise)
redis.call('HSET', KEYS[1], 'topped_up', total)
return raise
