--[[
  Rebuilds a lost budget counter from the store's figure, unless another process rebuilt it
  first (the first rebuild wins; later ones change nothing).

  Requests that settled while the counter was missing left their cost in it as `u:<request id>`
  (settle.inc.lua). The caller read those ids, then the store's figure together with which of
  them it counts, in one statement; each cost the figure does not count is added here. A request
  that settled into the counter after its ids were read may be in the figure or not: the rebuild
  is refused, to be read again.

  KEYS[1]  the counter hash (a budget window or the credit account)
  ARGV[1]  value field: spent (window) or balance (credit)
  ARGV[2]  the store's value, integer micro-units (for the credit: top-ups minus spend)
  ARGV[3]  its lifetime, ms (0: forever)
  ARGV[4]  the credit account's sum of top-ups its balance includes (credit-top-up-1.lua); '' for a window
  ARGV[5]  n, the number of request ids read from the counter; ARGV[6 .. 5+n] those ids; the
           rest, the ids among them whose records the store's value counts

  Returns 1 when it seeded the hash, 0 when it was seeded already, -1 when a request settled into
  it after its ids were read.
]]
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
local n = tonumber(ARGV[5])
local read, counted = {}, {}
for i = 6, 5 + n do read[ARGV[i]] = true end
for i = 6 + n, #ARGV do counted[ARGV[i]] = true end
local uncounted, settled = 0, {}
for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(field, 1, 2) == 'u:' then
    local id = string.sub(field, 3)
    if not read[id] then return -1 end
    if not counted[id] then uncounted = uncounted + tonumber(redis.call('HGET', KEYS[1], field)) end
    settled[#settled + 1] = field
  end
end
if #settled > 0 then redis.call('HDEL', KEYS[1], unpack(settled)) end
local value = tonumber(ARGV[2]) + (ARGV[1] == 'balance' and -uncounted or uncounted)
redis.call('HSET', KEYS[1], ARGV[1], string.format('%d', value), 'reserved', 0)
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'topped_up', ARGV[4]) end
if tonumber(ARGV[3]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) else redis.call('PERSIST', KEYS[1]) end
return 1
