--[[
  Gives an accepted response's state its whole lifetime once its job is queued, unless it has
  ended meanwhile (a fast worker's end set the shorter lifetime of an answer kept for polling).

  KEYS[1]  the response's state (hash)
  ARGV[1]  its lifetime from now, ms

  Returns 1 when the lifetime was set, 0 when the response had ended or has no state.
]]
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'queued' and status ~= 'in_progress' then return 0 end
return redis.call('PEXPIRE', KEYS[1], ARGV[1])
