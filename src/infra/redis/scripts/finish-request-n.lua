--[[
  Ends a request in one call on its tenant's slot: appends its last events (the terminal one
  among them) to its event stream and gives the stream its final lifetime, settles its budget
  reservation once (settle.inc.lua), and completes or frees its idempotency claim.

  On one Redis, which has no slots, the same call first pushes the request's usage record to
  the outbox and last publishes its events to the web process's reply channel: the record is
  queued before anything of the end is visible, and the reply goes out only once settled. On
  a cluster those two live in other slots, and the caller sends them before and after.

  KEYS[1]     the request's event stream
  KEYS[2]     the request's settled marker
  KEYS[3]     the tenant's outstanding reservations (sorted set)
  KEYS[4…]    the API key's requests in flight (sorted set) when the key has a concurrency limit
              (the count of the settlement's keys, KEYS[3] to the last pair, is then even);
              then pairs: counter hash, its expiry set (windows, then the credit account when ARGV[5] is 1);
              then the idempotency claim when ARGV[6] is not 'none';
              then the outbox list when ARGV[7] is not 0;
              then the response's state (a hash) when ARGV[10] is not 0
  ARGV[1]     the stream's lifetime from now, ms
  ARGV[2]     request id
  ARGV[3]     actual cost, integer micro-units (0: release only)
  ARGV[4]     lifetime of the settled marker, ms
  ARGV[5]     1 when the last counter pair is the credit account, else 0
  ARGV[6]     the claim: 'complete', 'release' or 'none'
  ARGV[7]     R: how many outbox records (the usage record) follow ARGV[13]
  ARGV[8]     the reply channel to publish ARGV[9] on last, or ''
  ARGV[9]     the reply message (the events below, as the web process reads them)
  ARGV[10]    F: how many field/value pairs of the response's state follow the records (0: none kept)
  ARGV[11]    the state's lifetime from now, ms
  ARGV[12]    K: how many outbox records go with the state (the response, its webhook event)
  ARGV[13]    1 when the state must be there already (a background response's, written at its
              acceptance), else 0
  ARGV[14]    1 when this is the end of a request the web answered as lost (below), else 0
  ARGV[15…]   R outbox records, then K records that go with the state, then F pairs of state
              fields (`status` first), then pairs: sequence number (integer ≥ 1), event line

  A request whose settled marker says `lost` was answered by the web "lost with Redis, send it
  again" while this worker still ran it (a Redis that came back empty): its end as it ran would
  charge and record an answer nobody received. Unless ARGV[14] is 1, nothing is written and the
  call returns lost; the caller ends it again as lost (no charge, a failed record, the claim
  released), and settle.inc.lua charges it nothing.

  A kept response's state, and the records that go with it, are written unless it is final
  already (a response cancelled or deleted meanwhile stays so), or is a background response of
  which Redis lost the state (the reaper fails it in the store): its usage is recorded and charged
  all the same. The state's `status` is ARGV[firstField + 1] and its `request` field names the
  request, so a repeated call finds its own end and writes it again. On a cluster the caller pushes
  the K records itself, when the state was written.

  Returns { 1 when the reservation was settled now, else 0; 1 when the state was written, else 0;
  1 when nothing was written because the request was answered as lost, else 0 }.

  Entries get the id 0-<seq>, so a reader resumes after any sequence number with XRANGE.
  An event whose sequence number is not above the stream's last one is already there and
  is skipped: the worker calls again when a reply was lost with its connection, and sends
  again the events of a chunk batch that failed (workers/publish.ts).

]]
-- #include settle
-- #include claim

local FINAL = { completed = true, failed = true, cancelled = true, incomplete = true, deleted = true }

local id = ARGV[2]
if ARGV[14] ~= '1' and redis.call('GET', KEYS[2]) == 'lost' then return { 0, 0, 1 } end
local last = #KEYS
local records = tonumber(ARGV[7])
local fields = tonumber(ARGV[10])
local keptRecords = tonumber(ARGV[12])
local state = nil
if fields > 0 then
  state = KEYS[last]
  last = last - 1
end
local outbox = nil
if records + keptRecords > 0 then
  outbox = KEYS[last]
  last = last - 1
end
if records > 0 then redis.call('LPUSH', outbox, unpack(ARGV, 15, 14 + records)) end
local firstKept = 15 + records
local firstField = firstKept + keptRecords
local firstEvent = firstField + 2 * fields
for i = firstEvent, #ARGV, 2 do
  -- pcall and this one refusal rather than reading the last id first: the usual call then
  -- costs no extra command, and every other error still ends the script.
  local added = redis.pcall('XADD', KEYS[1], '0-' .. ARGV[i], 'e', ARGV[i + 1])
  if type(added) == 'table' and added.err and not string.find(added.err, 'equal or smaller than the target stream top item', 1, true) then
    return redis.error_reply(added.err)
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])

if ARGV[6] == 'complete' then
  completeClaim(KEYS[last], id)
elseif ARGV[6] == 'release' then
  releaseClaim(KEYS[last], id)
end
if ARGV[6] ~= 'none' then last = last - 1 end
local settled = settle(KEYS[2], { unpack(KEYS, 3, last) }, id, tonumber(ARGV[3]), ARGV[4], ARGV[5] == '1')
local written = 0
if state then
  local status = redis.call('HGET', state, 'status')
  -- This request's own end already there: a call repeated after a lost reply writes it again, so
  -- that its caller pushes the records that go with it (they are idempotent where they land).
  local again = status == ARGV[firstField + 1] and redis.call('HGET', state, 'request') == id
  if again or not (FINAL[status or ''] or (not status and ARGV[13] == '1')) then
    redis.call('HSET', state, unpack(ARGV, firstField, firstEvent - 1))
    redis.call('PEXPIRE', state, ARGV[11])
    if keptRecords > 0 and outbox then redis.call('LPUSH', outbox, unpack(ARGV, firstKept, firstField - 1)) end
    written = 1
  end
end
if ARGV[8] ~= '' then redis.call('SPUBLISH', ARGV[8], ARGV[9]) end
return { settled, written, 0 }
