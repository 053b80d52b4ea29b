--[[
  Reads a file and records the access for expiry, in one round trip.

  KEYS[1] access-time index (zset)
  ARGV[1..5] key prefixes (see includes/lib.lua)
  ARGV[6] store path (never the root)

  Returns { 0, body } for a file (its version padded to the header size, then its content),
          { 1 } when nothing is there, { 3 } for a directory.
]]
--- @include "lib"

local path = ARGV[6]
local body = redis.call('GET', BODIES .. path)
if body then
  redis.call('ZADD', KEYS[1], nowMs(), path)
  return { OK, body }
end
if lookup(path) == 'd' then
  return { IS_DIRECTORY }
end
return { NOT_FOUND }
