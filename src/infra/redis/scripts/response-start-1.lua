--[[
  A worker starts a background response: queued becomes in_progress. A response cancelled or
  deleted while it waited stays so, and the worker then ends it without calling the upstream.

  KEYS[1]  the response's state (hash)

  Returns the status found: false when there is none (its state was lost with Redis).
]]
local status = redis.call('HGET', KEYS[1], 'status')
if status == 'queued' then redis.call('HSET', KEYS[1], 'status', 'in_progress') end
return status
