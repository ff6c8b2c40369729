--[[
  Takes up to N records from the outbox for one drainer, leasing them: a record whose
  lease expired (its drainer died or gave up) goes back to the outbox first, so a
  record is never lost, only possibly delivered twice (the store ignores the repeat).

  KEYS[1]  outbox items (list; producers LPUSH, this takes from the right: FIFO)
  KEYS[2]  leases (sorted set: record → time taken, ms)
  ARGV[1]  N, the most records to take
  ARGV[2]  now, ms
  ARGV[3]  lease, ms

  Returns the records taken, oldest first.
]]
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', tonumber(ARGV[2]) - tonumber(ARGV[3]), 'LIMIT', 0, tonumber(ARGV[1]))
for _, record in ipairs(expired) do
  redis.call('ZREM', KEYS[2], record)
  redis.call('RPUSH', KEYS[1], record)
end
local taken = redis.call('RPOP', KEYS[1], tonumber(ARGV[1]))
if not taken then
  return {}
end
for _, record in ipairs(taken) do
  redis.call('ZADD', KEYS[2], ARGV[2], record)
end
return taken
