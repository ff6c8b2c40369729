--[[
  Checks and charges four GCRA buckets at once (DESIGN.md, request path step 5): requests
  and tokens per minute, of one API key and of its tenant. A bucket allows a burst of a whole
  window's allowance and refills continuously. The request is charged to all four buckets
  only when every one of them admits it; otherwise nothing is written.

  A bucket is a hash {level, at}: `level` is the load in units × window-ms (one unit costs
  `window`, one ms drains `limit`, so with integer inputs everything stays an exact integer),
  measured at `at` (ms). GCRA's theoretical arrival time is at + level / limit.

  KEYS[1..4]   buckets: key requests, key tokens, tenant requests, tenant tokens
  ARGV[1]      now, ms
  ARGV[2]      window, ms
  ARGV[3..6]   limit of each bucket (units per window), in KEYS order
  ARGV[7..10]  cost of this request in each bucket (units), in KEYS order

  Returns {admitted (1 or 0), then per bucket in KEYS order: remaining units, ms until the
  bucket is full again, ms to wait until it would admit (0: admits now; -1: never, the cost
  exceeds a whole window's allowance)}. Values describe the state after the charge when admitted.
]]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local levels, ats, waits, admitted = {}, {}, {}, 1

for i = 1, 4 do
  local limit, cost = tonumber(ARGV[2 + i]), tonumber(ARGV[6 + i])
  local state = redis.call('HMGET', KEYS[i], 'level', 'at')
  local level, at = tonumber(state[1]) or 0, tonumber(state[2]) or now
  level = math.max(0, level - math.max(0, now - at) * limit)
  local excess = level + (cost - limit) * window
  local wait = 0
  if cost > limit then
    wait = -1
  elseif excess > 0 then
    wait = math.ceil(excess / limit)
  end
  if wait ~= 0 then admitted = 0 end
  -- A clock behind the stored one (another process) must not move `at` backwards.
  levels[i], ats[i], waits[i] = level, math.max(now, at), wait
end

local reply = {admitted}
for i = 1, 4 do
  local limit, cost = tonumber(ARGV[2 + i]), tonumber(ARGV[6 + i])
  local level = levels[i]
  if admitted == 1 then
    level = level + cost * window
    if level > 0 then
      redis.call('HSET', KEYS[i], 'level', string.format('%.0f', level), 'at', string.format('%.0f', ats[i]))
      -- Expire once the bucket would be full again: a missing bucket reads as full.
      redis.call('PEXPIRE', KEYS[i], math.ceil(level / limit))
    else
      redis.call('DEL', KEYS[i])
    end
  end
  local reset = 0
  if limit > 0 then reset = math.ceil(level / limit) end
  reply[#reply + 1] = math.floor((limit * window - level) / window)
  reply[#reply + 1] = reset
  reply[#reply + 1] = waits[i]
end
return reply
