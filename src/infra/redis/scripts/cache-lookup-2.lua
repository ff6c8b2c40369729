--[[
  Reads one answer of a tenant's response cache, and the bytes the tenant's cache holds, in one
  call: a look-up costs a request one round trip, hit or miss, and keeps the web's gauge current.

  KEYS[1]  the entry (string)
  KEYS[2]  the tenant's cache sizes (hash: digest -> bytes, and '#total')

  Returns { the entry, or false when there is none; the total bytes held (0 when none) }.
]]
return { redis.call('GET', KEYS[1]), tonumber(redis.call('HGET', KEYS[2], '#total') or '0') }
