--[[
  Marks a claim completed, so later claims replay it; only its owner may (compare-and-set).
  Repeating it is harmless: a job can run twice. The expiry stays that of the claim.

  KEYS[1]  the claim (hash written by idempotency-claim-1.lua)
  ARGV[1]  request id of the owner

  Returns 1 when completed, 0 when the claim is gone or held by another request.
]]
if redis.call('HGET', KEYS[1], 'requestId') ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'state', 'completed')
return 1
