--[[
  Marks a claim completed (see claim.inc.lua).

  KEYS[1]  the claim (hash written by admit-n.lua)
  ARGV[1]  request id of the owner

  Returns 1 when completed, 0 when the claim is gone or held by another request.
]]
-- #include claim

return completeClaim(KEYS[1], ARGV[1])
