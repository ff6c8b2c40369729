--[[
  Appends a request's events to its stream and publishes them to the reply
  channel of the web process that waits for them, in one round trip.

  KEYS[1]  the request's event stream
  ARGV[1]  reply channel
  ARGV[2]  stream lifetime, milliseconds
  ARGV[3]  request id
  ARGV[4…] pairs: sequence number (integer ≥ 1), event line ("<type> <payload>")

  Stream entries get the id 0-<seq>, so a reader resumes after any sequence
  number with XRANGE (0-<seq> +. A sequence number that is not above the last
  one is an error: it would mean two writers for one request.

  Returns the number of events appended.
]]
local lines = { ARGV[3] }
for i = 4, #ARGV, 2 do
  redis.call('XADD', KEYS[1], '0-' .. ARGV[i], 'e', ARGV[i + 1])
  lines[#lines + 1] = ARGV[i] .. ' ' .. ARGV[i + 1]
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PUBLISH', ARGV[1], table.concat(lines, '\n'))
return (#ARGV - 3) / 2
