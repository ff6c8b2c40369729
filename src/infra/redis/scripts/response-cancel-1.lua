--[[
  Cancels a queued or running response: its status and body become the cancelled ones at once,
  and the request's last call (finish-request-n.lua) leaves them so.

  KEYS[1]  the response's state (hash)
  ARGV[1]  the cancelled Response object (JSON)

  Returns the status found: queued or in_progress when it was cancelled now, false when there is none.
]]
local status = redis.call('HGET', KEYS[1], 'status')
if status == 'queued' or status == 'in_progress' then redis.call('HSET', KEYS[1], 'status', 'cancelled', 'body', ARGV[1]) end
return status
