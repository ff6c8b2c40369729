-- Marks a claim completed, so later claims replay it; only its owner may (compare-and-set).
-- Repeating it is harmless: a job can run twice. The expiry stays that of the claim.
local function completeClaim(claim, owner)
  if redis.call('HGET', claim, 'requestId') ~= owner then return 0 end
  redis.call('HSET', claim, 'state', 'completed')
  return 1
end

-- Frees a claim whose request failed without being charged; only its owner may, and only
-- while it is in flight (a completed request stays replayable).
local function releaseClaim(claim, owner)
  local held = redis.call('HMGET', claim, 'requestId', 'state')
  if held[1] ~= owner or held[2] ~= 'in_flight' then return 0 end
  redis.call('DEL', claim)
  return 1
end
