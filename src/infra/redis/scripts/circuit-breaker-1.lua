--[[
  One deployment's circuit breaker and pause, shared by every worker
  (docs/decisions/routing-pools-breakers.md).

  KEYS[1]  the deployment's hash: st (0 closed, 1 open, 2 half-open), until (ms the open state
           ends), cd (the cooldown it opened with, ms), ws (start of the current fixed window,
           ms), c and f (calls and failures in it), pc and pf (in the one before), pause (ms new
           calls wait until, from a 429's Retry-After), probe (ms the half-open probe was let go)

  ARGV[1]  now, ms (the caller's clock)
  ARGV[2]  'read' | 'report' | 'probe'
  ARGV[3]  failure rate that opens it (0..1); ARGV[4] the fewest calls that count; ARGV[5] the
           window, ms; ARGV[6] the first cooldown, ms; ARGV[7] the longest cooldown, ms
  ARGV[8]  report: calls since the last report; ARGV[9] of which failed
  ARGV[10] report: the probe's outcome, '' (not a probe), 'ok' or 'fail'
  ARGV[11] report: pause new calls until this ms (0: no pause)
  ARGV[12] probe: how long a probe may run before another is let go (its worker may have died)

  The window slides: the previous fixed window counts in proportion to how much of it is still
  inside the sliding one, so a report costs the same however many calls it counts.

  Returns {state, open until ms, paused until ms, transition ('' | 'open' | 'half_open' |
  'closed'), 1 when a probe was granted}.
]]
local now, op = tonumber(ARGV[1]), ARGV[2]
local v = redis.call('HMGET', KEYS[1], 'st', 'until', 'cd', 'ws', 'c', 'f', 'pc', 'pf', 'pause', 'probe')
local st, openUntil, cd = tonumber(v[1]) or 0, tonumber(v[2]) or 0, tonumber(v[3]) or 0
local ws = tonumber(v[4]) or now
local c, f, pc, pf = tonumber(v[5]) or 0, tonumber(v[6]) or 0, tonumber(v[7]) or 0, tonumber(v[8]) or 0
local pause, probeAt = tonumber(v[9]) or 0, tonumber(v[10]) or 0
if op == 'read' then return { st, openUntil, pause, '', 0 } end

local rate, minCalls, window = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local cooldown, maxCooldown = tonumber(ARGV[6]), tonumber(ARGV[7])
local elapsed = now - ws
if elapsed >= 2 * window then
  pc, pf, c, f, ws = 0, 0, 0, 0, now
elseif elapsed >= window then
  pc, pf, c, f, ws = c, f, 0, 0, ws + window
end

local transition, granted = '', 0
if op == 'probe' then
  if st == 1 and now >= openUntil then
    st, probeAt, granted, transition = 2, now, 1, 'half_open'
  elseif st == 2 and now - probeAt >= tonumber(ARGV[12]) then
    -- The last probe's worker never reported: let another go rather than stay half-open forever.
    probeAt, granted = now, 1
  else
    return { st, openUntil, pause, '', 0 }
  end
else
  local probe, pauseUntil = ARGV[10], tonumber(ARGV[11])
  if pauseUntil > pause then pause = pauseUntil end
  if probe == 'ok' and st == 2 then
    st, cd, c, f, pc, pf, ws, transition = 0, 0, 0, 0, 0, 0, now, 'closed'
  elseif probe == 'fail' and st == 2 then
    cd = math.min(math.max(cd * 2, cooldown), maxCooldown)
    st, openUntil, transition = 1, now + cd, 'open'
  elseif st == 0 then
    -- Calls that ended while it was open or half-open (sent before it opened) do not count.
    c, f = c + tonumber(ARGV[8]), f + tonumber(ARGV[9])
    local weight = math.max(0, 1 - (now - ws) / window)
    local total, failed = c + pc * weight, f + pf * weight
    if total >= minCalls and failed >= rate * total then
      st, cd, openUntil, transition = 1, cooldown, now + cooldown, 'open'
    end
  end
end

redis.call('HSET', KEYS[1], 'st', st, 'until', string.format('%.0f', openUntil), 'cd', cd, 'ws', string.format('%.0f', ws),
  'c', c, 'f', f, 'pc', pc, 'pf', pf, 'pause', string.format('%.0f', pause), 'probe', string.format('%.0f', probeAt))
-- Long enough for the window, an open state's longest cooldown, and the pause.
local keep = math.max(2 * window, openUntil - now + maxCooldown, pause - now) + 60000
redis.call('PEXPIRE', KEYS[1], string.format('%.0f', keep))
return { st, openUntil, pause, transition, granted }
