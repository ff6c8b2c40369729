--[[
  Adds a top-up to the tenant's credit balance in Redis, if that counter exists;
  otherwise the next rebuild reads the top-up from the store.

  KEYS[1]  the credit account hash
  ARGV[1]  amount, integer micro-units

  Returns 1 when the balance was raised, 0 when there is no counter.
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[1], 'balance', ARGV[1])
return 1
