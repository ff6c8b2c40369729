-- Integer strings: Lua would send -0 or 1e+17, which HINCRBY rejects.
local function incr(hash, name, amount)
  redis.call('HINCRBY', hash, name, string.format('%d', amount))
end

-- Frees the reservations of a counter whose expiry (in its sorted set) has passed; returns how many.
local function reap(hash, expiries, now)
  local expired = redis.call('ZRANGEBYSCORE', expiries, '-inf', now)
  for _, member in ipairs(expired) do
    local amount = redis.call('HGET', hash, 'r:' .. member)
    if amount then
      incr(hash, 'reserved', -tonumber(amount))
      redis.call('HDEL', hash, 'r:' .. member)
    end
  end
  if #expired > 0 then redis.call('ZREMRANGEBYSCORE', expiries, '-inf', now) end
  return #expired
end
