--[[
  Frees a claim whose request failed without being charged; only its owner may, and only
  while it is in flight (a completed request stays replayable).

  KEYS[1]  the claim (hash written by idempotency-claim-1.lua)
  ARGV[1]  request id of the owner

  Returns 1 when released, 0 otherwise.
]]
local held = redis.call('HMGET', KEYS[1], 'requestId', 'state')
if held[1] ~= ARGV[1] or held[2] ~= 'in_flight' then
  return 0
end
redis.call('DEL', KEYS[1])
return 1
