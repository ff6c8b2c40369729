--[[
  What every worker knows of an alias's deployments, for `least-busy` and `latency` routing
  (docs/decisions/routing-pools-breakers.md): one field per deployment and
  worker, which only that worker writes.

  KEYS[1]  the alias's hash: field '<deployment>|<worker>' → '<in flight> <latency ms> <at ms>'
           (latency: the worker's decaying average to the first token; -1: none measured)

  ARGV[1]  now, ms; ARGV[2] a field older than this (ms) is dropped (its worker is gone)
  then pairs: field, value (this worker's own)

  Writes this worker's fields, drops those no worker refreshed, and returns every field left,
  as HGETALL does.
]]
local now, stale = tonumber(ARGV[1]), tonumber(ARGV[2])
for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
local all = redis.call('HGETALL', KEYS[1])
local kept = {}
for i = 1, #all, 2 do
  local at = tonumber(string.match(all[i + 1], '(%d+)$')) or 0
  if now - at > stale then
    redis.call('HDEL', KEYS[1], all[i])
  else
    kept[#kept + 1] = all[i]
    kept[#kept + 1] = all[i + 1]
  end
end
redis.call('PEXPIRE', KEYS[1], stale)
return kept
