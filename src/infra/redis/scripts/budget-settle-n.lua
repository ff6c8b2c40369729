--[[
  Settles a request once (see settle.inc.lua): frees its reservations and charges its
  actual cost.

  KEYS[1]  the request's settled marker
  KEYS[2]  the tenant's outstanding reservations (sorted set)
  KEYS[3…] the API key's requests in flight (sorted set) when the key has a concurrency
           limit (the count of these KEYS[2…] is then even); then pairs: counter hash, its
           expiry sorted set; the windows first, then the credit account when ARGV[4] is 1
  ARGV[1]  request id
  ARGV[2]  actual cost, integer micro-units (0: release only)
  ARGV[3]  lifetime of the settled marker, ms
  ARGV[4]  1 when the last pair is the credit account, else 0

  Returns 1 when settled now, 0 when it had been settled before.
]]
-- #include settle

return settle(KEYS[1], { unpack(KEYS, 2) }, ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4] == '1')
