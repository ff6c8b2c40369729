--[[
  Frees a claim whose request failed without being charged (see claim.inc.lua).

  KEYS[1]  the claim (hash written by admit-n.lua)
  ARGV[1]  request id of the owner

  Returns 1 when released, 0 otherwise.
]]
-- #include claim

return releaseClaim(KEYS[1], ARGV[1])
