--[[
  Reads a file and records the access for expiry, in one round trip.

  KEYS[1] access-time index (zset)
  ARGV[1..4] key prefixes (see includes/lib.lua)
  ARGV[5] store path (never the root)

  Returns { 0, content, version } for a file,
          { 1 } when nothing is there, { 3 } for a directory.
]]
--- @include "lib"

local path = ARGV[5]
local file = redis.call('HMGET', FILES .. path, 'c', 'v')
if file[1] then
  redis.call('ZADD', KEYS[1], nowMs(), path)
  return { OK, file[1], file[2] }
end
if lookup(path) == 'd' then
  return { IS_DIRECTORY }
end
return { NOT_FOUND }
