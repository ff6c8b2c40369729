-- #include counters

--[[
  Settles a request once: frees its reservations and charges its actual cost to every
  window (spent) and to the credit account (balance). The cost is charged even when the
  reservation already expired, because it was still incurred. A counter that is missing
  stays missing: the next reserve rebuilds it from the store, which holds this request's
  usage record; creating it here would restart the window at this one cost.

  keys: the sets the request is a member of while it runs (sorted sets: the tenant's
  outstanding reservations, then its API key's requests in flight when the key has a
  concurrency limit, which makes the count of keys even), then pairs of counter hash, its
  expiry set; the credit account last when lastIsCredit.
  Returns 1 when settled now, 0 when it had been settled before.
]]
local function settle(marker, keys, id, actual, markerTtlMs, lastIsCredit)
  if redis.call('EXISTS', marker) == 1 then return 0 end
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
    if amount or redis.call('EXISTS', hash) == 1 then
      if lastIsCredit and i == slots then
        incr(hash, 'balance', -actual)
      else
        incr(hash, 'spent', actual)
      end
    end
    redis.call('ZREM', expiries, id)
  end
  for i = 1, sets do redis.call('ZREM', keys[i], id) end
  redis.call('SET', marker, 1, 'PX', markerTtlMs)
  return 1
end
