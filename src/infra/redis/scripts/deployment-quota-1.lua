--[[
  One deployment's requests and tokens per minute, shared by every worker
  (docs/decisions/routing-pools-breakers.md): GCRA, as admit-n.lua keeps a tenant's buckets. A
  level is load in units × window-ms; one ms drains `limit` of it.

  KEYS[1]  the deployment's hash: r (requests level), t (tokens level), at (ms of both)

  ARGV[1]  now, ms (the caller's clock)
  ARGV[2]  'take' | 'spend'
  ARGV[3]  the window, ms
  ARGV[4]  requests per window (0: no limit); ARGV[5] tokens per window (0: no limit)
  ARGV[6]  spend: tokens the deployment's finished calls used

  take: one call is let through when the requests bucket has room for it and the tokens bucket
  is not over its allowance (a call's tokens are known only once it ended: they are spent
  after, so a deployment at its tokens limit is passed over until it drains). Returns
  {1, 0} when let through (and charged), {0, ms to wait} when not.
  spend: adds the tokens; returns {1, 0}.
]]
local now, op, window = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local rpm, tpm = tonumber(ARGV[4]), tonumber(ARGV[5])
local v = redis.call('HMGET', KEYS[1], 'r', 't', 'at')
local at = tonumber(v[3]) or now
local elapsed = math.max(0, now - at)
local r = math.max(0, (tonumber(v[1]) or 0) - elapsed * rpm)
local t = math.max(0, (tonumber(v[2]) or 0) - elapsed * tpm)

if op == 'take' then
  local wait = 0
  if rpm > 0 then
    local excess = r + (1 - rpm) * window
    if excess > 0 then wait = math.ceil(excess / rpm) end
  end
  if tpm > 0 and t > tpm * window then wait = math.max(wait, math.ceil((t - tpm * window) / tpm)) end
  if wait > 0 then return { 0, wait } end
  if rpm > 0 then r = r + window end
else
  if tpm > 0 then t = t + tonumber(ARGV[6]) * window end
end
redis.call('HSET', KEYS[1], 'r', string.format('%.0f', r), 't', string.format('%.0f', t), 'at', string.format('%.0f', math.max(now, at)))
-- Both buckets are empty again at most a window after the last charge, or as long as the tokens take to drain.
local keep = window
if tpm > 0 then keep = math.max(keep, math.ceil(t / tpm)) end
redis.call('PEXPIRE', KEYS[1], keep)
return { 1, 0 }
