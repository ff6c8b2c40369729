--[[
  Claims an idempotency key for a request, or reports who holds it (spec: Errors, Idempotency).
  A claim past its expiry counts as absent even before Redis drops it, so the caller's clock rules.

  KEYS[1]  the claim (hash: fingerprint, requestId, state in_flight|completed, expiresAt ms)
  ARGV[1]  fingerprint of the canonical request body
  ARGV[2]  request id of the claimant
  ARGV[3]  now, ms
  ARGV[4]  time to live, ms

  Returns {'claimed'} | {'in_flight', requestId} | {'completed', requestId} | {'mismatch'}.
]]
local held = redis.call('HMGET', KEYS[1], 'fingerprint', 'requestId', 'state', 'expiresAt')
if held[1] and (tonumber(held[4]) or 0) > tonumber(ARGV[3]) then
  if held[1] ~= ARGV[1] then
    return {'mismatch'}
  end
  return {held[3], held[2]}
end
local expiresAt = string.format('%.0f', tonumber(ARGV[3]) + tonumber(ARGV[4]))
redis.call('HSET', KEYS[1], 'fingerprint', ARGV[1], 'requestId', ARGV[2], 'state', 'in_flight', 'expiresAt', expiresAt)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {'claimed'}
