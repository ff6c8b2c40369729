--[[
  Admits one request in one round trip on its tenant's slot (DESIGN.md, request path 5, 8
  and 9): the response cache's look-up, the rate limits, the idempotency claim, and the
  budget and credit reservation with the tenant's queue cap and the API key's concurrency
  limit. Each part is optional; the caller says which it sends.

  Order: the cache is read. Rate limits refuse → nothing written. A fresh cached answer
  without a price → returned, the rate limits charged, nothing else written (a hit holds no
  claim, no reservation and no slot). Counters the budget needs and Redis lost → nothing
  written, the caller rebuilds them and calls again. A fresh answer with a price → the rate
  limits charged, then the budget refuses it (not returned) or its price is charged to every
  window and the credit at once (it ends as it starts: nothing to reserve), once per request
  (the request's settlement marker, so that a call sent again after a lost reply does not
  charge twice), and it is returned.
  A claim held by an earlier
  request (or by another body) → returned, the rate limits charged, nothing else written.
  The API key has as many requests in flight as it may → nothing written (its client retries
  within a second, and a minute's allowance must not drain on those retries). Then the rate
  limits are charged. The budget or the queue refuses → the claim is not made. Otherwise
  the claim, the reservation and the key's in-flight entry are written together.

  KEYS, each group present only with its part, in this order:
    h  the cache entry (string "<stored at ms>:<answer>", cache-store-4.lua), the tenant's
       cache sizes (hash, field '#total'), the request's settlement marker (string)
    r  the tenant's rate hash: field 't' (the tenant) and 'k:<key id>' (one API key), each
       "<requests level> <tokens level> <at ms>"; both buckets of a scope are charged
       together, so they share one time
    c  the idempotency claim (hash: fingerprint, requestId, state, expiresAt), then the
       tenant's claims-kept-since (string: ms)
    b  the tenant's outstanding reservations (sorted set: request id → expiry ms), then the
       API key's requests in flight (the same) when it has a concurrency limit, then pairs:
       counter hash (spent | balance, reserved, r:<request id>), its expiry set; the windows
       first, then the credit account when asked

  ARGV[1]  now, ms (the caller's clock: lifetimes are relative, so Redis's never counts)
  ARGV[2]  the parts sent, in order: a string of h, r, c, b
  then, per part in that order:
    h  the oldest stored-at (ms) a hit may have: the request's max-age; the price of a hit
       (integer micro-units, 0: none); the marker's lifetime (ms)
    r  window ms; the key's field; limits, then costs, of: key requests, key tokens,
       tenant requests, tenant tokens (units per window)
    c  fingerprint of the canonical body; request id; lifetime ms
    b  request id; estimate (integer micro-units); the reservation's expiry ms; most
       outstanding (-1: no cap); most in flight of the key (-1: no cap, and no in-flight set
       among the KEYS); number of windows W; 1 when the credit account follows; per window:
       limit (micro-units), lifetime of its keys (ms)

  Returns {rate, claim, budget, cache}, 0 for a part absent or not reached:
    cache   {the entry when served, else false; the bytes the tenant's cache holds}; on a hit
            claim and budget are 0
    rate    {admitted (1|0), then per bucket: remaining units, ms until full again, ms to
            wait until it would admit (0: now; -1: never, the cost exceeds a window)}, the
            buckets as this call left them
    claim   {'claimed', 1 when the tenant's claims were kept for less than one lives, else 0} | {'in_flight', request id}
            | {'completed', request id} | {'mismatch'}
    budget  {'ok', outstanding including this one} | {'queue_full', outstanding}
            | {'key_busy', the key's requests in flight}
            | {'budget', index of each exhausted window…} | {'credit', balance − reserved}
            | {'missing', index of each missing counter…}; indexes 1-based
]]
-- #include counters

local now = tonumber(ARGV[1])
local parts = ARGV[2]
local key, arg = 1, 3
local function nextKey()
  key = key + 1
  return KEYS[key - 1]
end
local function nextArg()
  arg = arg + 1
  return ARGV[arg - 1]
end

local hit, rate, claim, budget
if string.find(parts, 'h', 1, true) then
  hit = { entry = nextKey(), sizes = nextKey(), marker = nextKey(), oldest = tonumber(nextArg()), price = nextArg(), markerTtl = nextArg() }
  hit.amount = tonumber(hit.price)
end
if string.find(parts, 'r', 1, true) then
  rate = { hash = nextKey(), window = tonumber(nextArg()), keyField = nextArg(), limits = {}, costs = {} }
  for i = 1, 4 do rate.limits[i] = tonumber(nextArg()) end
  for i = 1, 4 do rate.costs[i] = tonumber(nextArg()) end
end
if string.find(parts, 'c', 1, true) then
  claim = { key = nextKey(), since = nextKey(), fingerprint = nextArg(), id = nextArg(), ttl = tonumber(nextArg()) }
end
if string.find(parts, 'b', 1, true) then
  budget = { outstanding = nextKey(), id = nextArg(), estimate = nextArg(), expiresAt = nextArg(),
             cap = tonumber(nextArg()), keyCap = tonumber(nextArg()), windows = tonumber(nextArg()), credit = nextArg() == '1',
             counters = {}, limits = {}, keep = {} }
  if budget.keyCap >= 0 then budget.inFlight = nextKey() end
  for i = key, #KEYS do budget.counters[#budget.counters + 1] = KEYS[i] end
  for i = 1, budget.windows do
    budget.limits[i] = tonumber(nextArg())
    budget.keep[i] = nextArg()
  end
  -- Kept as sent for HSET (Lua would format a large number as 1e+17); compared as a number.
  budget.amount = tonumber(budget.estimate)
end

-- A hit is the entry alone: the rest of the admission is for a request that runs.
local cacheReply, cached = 0, false
if hit then
  local entry = redis.call('GET', hit.entry)
  local storedAt = entry and tonumber(string.match(entry, '^(%d+):'))
  cached = storedAt and storedAt >= hit.oldest or false
  cacheReply = { cached and entry, tonumber(redis.call('HGET', hit.sizes, '#total') or '0') }
end
-- The reply of a call that does not serve the entry: its size only.
local function unserved()
  if cacheReply == 0 then return 0 end
  return { false, cacheReply[2] }
end

--[[
  GCRA: a bucket's level is its load in units × window-ms (one unit costs `window`, one ms
  drains `limit`, so integer inputs keep it exact) at time `at`. A bucket admits a burst of a
  whole window's allowance and is full again `level / limit` ms after its last charge, so
  the hash outlives every bucket in it when it expires one window after each charge.
]]
local rateReply, unchargedReply, chargeRate = 0, 0, function() end
if rate then
  local stored = redis.call('HMGET', rate.hash, rate.keyField, 't')
  local levels, ats, waits, admitted = {}, {}, {}, 1
  for scope = 1, 2 do
    local requests, tokens, at = string.match(stored[scope] or '', '^(%d+) (%d+) (%d+)$')
    local fromLevels = { tonumber(requests) or 0, tonumber(tokens) or 0 }
    at = tonumber(at) or now
    for dimension = 1, 2 do
      local i = 2 * (scope - 1) + dimension
      local limit, cost = rate.limits[i], rate.costs[i]
      local level = math.max(0, fromLevels[dimension] - math.max(0, now - at) * limit)
      local excess = level + (cost - limit) * rate.window
      local wait = 0
      if cost > limit then
        wait = -1
      elseif excess > 0 then
        wait = math.ceil(excess / limit)
      end
      if wait ~= 0 then admitted = 0 end
      levels[i], waits[i] = level, wait
    end
    -- A clock behind the stored one (another process) must not move `at` backwards.
    ats[scope] = math.max(now, at)
  end
  local function replyOf(current)
    local reply = { admitted }
    for i = 1, 4 do
      local limit = rate.limits[i]
      local reset = 0
      if limit > 0 then reset = math.ceil(current[i] / limit) end
      reply[#reply + 1] = math.floor((limit * rate.window - current[i]) / rate.window)
      reply[#reply + 1] = reset
      reply[#reply + 1] = waits[i]
    end
    return reply
  end
  if admitted == 0 then return { replyOf(levels), 0, 0, unserved() } end
  local charged = {}
  for i = 1, 4 do charged[i] = levels[i] + rate.costs[i] * rate.window end
  rateReply, unchargedReply = replyOf(charged), replyOf(levels)
  local function encode(first, scope)
    return string.format('%.0f %.0f %.0f', charged[first], charged[first + 1], ats[scope])
  end
  chargeRate = function()
    redis.call('HSET', rate.hash, rate.keyField, encode(1, 1), 't', encode(3, 2))
    redis.call('PEXPIRE', rate.hash, rate.window)
  end
end

if cached and hit.amount == 0 then
  chargeRate()
  return { rateReply, 0, 0, cacheReply }
end

-- Each counter's value (spent, or the credit's balance), what is reserved, and this request's own
-- reservation, read once. A counter exists when its value does (a rebuild seeds it), and a
-- missing one is never read as zero.
local held, valueFields = {}, {}
if budget then
  local missing = { 'missing' }
  local field = 'r:' .. budget.id
  local slots = #budget.counters / 2
  for i = 1, slots do
    valueFields[i] = (budget.credit and i == slots) and 'balance' or 'spent'
    held[i] = redis.call('HMGET', budget.counters[2 * i - 1], valueFields[i], 'reserved', field)
    if not held[i][1] then missing[#missing + 1] = i end
  end
  if #missing > 1 then return { 0, 0, missing, unserved() } end
end

-- What others reserved on each counter (a repeated reserve replaces its own amount), as the
-- budget's check of an amount read it, and that check: the refusal, or nil when it fits.
-- Expired reservations are reaped first, and then the counter is read again.
local others = {}
local function refusalOf(amount)
  local counters, field = budget.counters, 'r:' .. budget.id
  local slots = #counters / 2
  local exhausted = { 'budget' }
  for i = 1, slots do
    if reap(counters[2 * i - 1], counters[2 * i], now) > 0 then
      held[i] = redis.call('HMGET', counters[2 * i - 1], valueFields[i], 'reserved', field)
    end
    local values = held[i]
    others[i] = tonumber(values[2] or '0') - tonumber(values[3] or '0')
    if i <= budget.windows and tonumber(values[1] or '0') + others[i] + amount > budget.limits[i] then exhausted[#exhausted + 1] = i end
  end
  if #exhausted > 1 then return exhausted end
  if budget.credit then
    local available = tonumber(held[slots][1]) - others[slots]
    if available - amount < 0 then return { 'credit', available } end
  end
end

if cached then
  chargeRate()
  if budget then
    -- A marked request was charged by an earlier run of this call: it is served as then.
    if redis.call('EXISTS', hit.marker) == 0 then
      local refusal = refusalOf(hit.amount)
      if refusal then return { rateReply, 0, refusal, unserved() } end
      redis.call('SET', hit.marker, '1', 'PX', hit.markerTtl)
      local slots = #budget.counters / 2
      for i = 1, slots do
        incr(budget.counters[2 * i - 1], valueFields[i], valueFields[i] == 'balance' and -hit.amount or hit.amount)
      end
    end
  end
  return { rateReply, 0, 0, cacheReply }
end

-- A claim past its expiry counts as absent even before Redis drops it, so the caller's clock rules.
local claimReply = 0
if claim then
  local held = redis.call('HMGET', claim.key, 'fingerprint', 'requestId', 'state', 'expiresAt')
  if held[1] and (tonumber(held[4]) or 0) > now then
    chargeRate()
    if held[1] ~= claim.fingerprint then return { rateReply, { 'mismatch' }, 0, cacheReply } end
    return { rateReply, { held[3], held[2] }, 0, cacheReply }
  end
  -- Whether this slot has kept the tenant's claims for less than a claim lives: a Redis that came back
  -- empty has forgotten the keys claimed before, and the caller then asks the store about this one.
  local since = tonumber(redis.call('GET', claim.since) or now)
  claimReply = { 'claimed', now - since < claim.ttl and 1 or 0 }
end

-- Members past their expiry are requests that never ended (a lost job): they free their slot.
if budget and budget.inFlight then
  redis.call('ZREMRANGEBYSCORE', budget.inFlight, '-inf', now)
  local running = redis.call('ZCARD', budget.inFlight)
  if running >= budget.keyCap and not redis.call('ZSCORE', budget.inFlight, budget.id) then
    return { unchargedReply, 0, { 'key_busy', running }, cacheReply }
  end
end
chargeRate()

local budgetReply = 0
if budget then
  local counters, id = budget.counters, budget.id
  local field = 'r:' .. id
  local slots = #counters / 2
  local refusal = refusalOf(budget.amount)
  if refusal then return { rateReply, 0, refusal, cacheReply } end
  redis.call('ZREMRANGEBYSCORE', budget.outstanding, '-inf', now)
  local queued = redis.call('ZCARD', budget.outstanding)
  if budget.cap >= 0 and queued >= budget.cap and not redis.call('ZSCORE', budget.outstanding, id) then
    return { rateReply, 0, { 'queue_full', queued }, cacheReply }
  end
  for i = 1, slots do
    local hash, expiries = counters[2 * i - 1], counters[2 * i]
    local old = tonumber(held[i][3] or '0')
    redis.call('HSET', hash, field, budget.estimate)
    incr(hash, 'reserved', budget.amount - old)
    redis.call('ZADD', expiries, budget.expiresAt, id)
    -- The credit's expiry set must outlive its members: they are what frees the credit's reservations.
    if i <= budget.windows then redis.call('PEXPIRE', expiries, budget.keep[i]) end
  end
  queued = queued + redis.call('ZADD', budget.outstanding, budget.expiresAt, id)
  -- Every reservation lives as long, so the newest one's expiry covers the whole set.
  local lifetime = string.format('%d', tonumber(budget.expiresAt) - now)
  redis.call('PEXPIRE', budget.outstanding, lifetime)
  if budget.inFlight then
    redis.call('ZADD', budget.inFlight, budget.expiresAt, id)
    redis.call('PEXPIRE', budget.inFlight, lifetime)
  end
  budgetReply = { 'ok', queued }
end

if claim then
  redis.call('HSET', claim.key, 'fingerprint', claim.fingerprint, 'requestId', claim.id, 'state', 'in_flight',
    'expiresAt', string.format('%.0f', now + claim.ttl))
  redis.call('PEXPIRE', claim.key, claim.ttl)
  redis.call('SET', claim.since, string.format('%.0f', now), 'NX')
end
return { rateReply, claimReply, budgetReply, cacheReply }
