--[[
  Rebuilds a lost budget counter from the store's figure, unless another process
  rebuilt it first (the first rebuild wins; later ones change nothing).

  KEYS[1]  the counter hash (a budget window or the credit account)
  ARGV[1]  value field: spent (window) or balance (credit)
  ARGV[2]  its value, integer micro-units
  ARGV[3]  its lifetime, ms (0: forever)
  ARGV[4]  the credit account's: the sum of top-ups its balance includes (credit-top-up-1.lua)

  Returns 1 when it seeded the hash, 0 when the hash already existed.
]]
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2], 'reserved', 0)
if ARGV[4] then redis.call('HSET', KEYS[1], 'topped_up', ARGV[4]) end
if tonumber(ARGV[3]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1
