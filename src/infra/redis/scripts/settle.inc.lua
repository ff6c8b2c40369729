-- #include counters

--[[
  Settles a request once: frees its reservations and charges its actual cost to every
  window (spent) and to the credit account (balance). The cost is charged even when the
  reservation already expired, because it was still incurred.

  A counter without its value was lost (a Redis that came back empty) and is rebuilt from the
  store by the next reserve; creating its value here would restart the window at this one cost.
  But this request's usage record may not be in the store by then (it waits in the outbox), so
  its cost is kept in the counter as `u:<request id>`, and the rebuild (budget-seed-1.lua) adds
  each such cost that the store's figure does not count yet. Such a counter still reads as
  missing to a reserve. A window's lives at most UNSEEDED_KEEP_MS when no reserve comes.

  keys: the sets the request is a member of while it runs (sorted sets: the tenant's
  outstanding reservations, then its API key's requests in flight when the key has a
  concurrency limit, which makes the count of keys even), then pairs of counter hash, its
  expiry set; the credit account last when lastIsCredit.
  A marker set to `lost` is the web's: it told the client that Redis lost the request and to send
  it again (SET NX, so only while the request was not settled). The request is then settled at no
  cost, as often as it is settled (the web's own give-back, then its worker's end): its reservations
  are freed, nothing is charged, and the marker stays `lost` for the worker to see.

  Returns 1 when settled now, 0 when it had been settled before.
]]
-- Longer than a month's window and the days a window's counter is kept after it ends.
local UNSEEDED_KEEP_MS = 40 * 24 * 3600 * 1000

local function settle(marker, keys, id, actual, markerTtlMs, lastIsCredit)
  local prior = redis.call('GET', marker)
  if prior and prior ~= 'lost' then return 0 end
  if prior == 'lost' then actual = 0 end
  local field = 'r:' .. id
  local sets = 2 - #keys % 2
  local slots = (#keys - sets) / 2
  for i = 1, slots do
    local hash, expiries = keys[sets + 2 * i - 1], keys[sets + 2 * i]
    -- The reservation's field exists only in an existing counter; without it, ask whether the counter does.
    local amount = redis.call('HGET', hash, field)
    if amount then
      incr(hash, 'reserved', -tonumber(amount))
      redis.call('HDEL', hash, field)
    end
    local credit = lastIsCredit and i == slots
    local value = credit and 'balance' or 'spent'
    if amount or redis.call('HEXISTS', hash, value) == 1 then
      incr(hash, value, credit and -actual or actual)
    elseif actual > 0 then
      redis.call('HSET', hash, 'u:' .. id, string.format('%d', actual))
      if not credit and redis.call('PTTL', hash) == -1 then redis.call('PEXPIRE', hash, UNSEEDED_KEEP_MS) end
    end
    redis.call('ZREM', expiries, id)
  end
  for i = 1, sets do redis.call('ZREM', keys[i], id) end
  if prior ~= 'lost' then redis.call('SET', marker, 1, 'PX', markerTtlMs) end
  return 1
end
