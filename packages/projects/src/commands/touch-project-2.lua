--[[
  Records that a project changed (counters, active session, checkpoint), for readers of the
  change feed. Status changes record themselves in transition-4.lua.

  KEYS[1] change feed (zset id -> version)
  KEYS[2] change version counter
  ARGV[1] project id

  Returns the new version.
]]
--- @include "index"

touch(KEYS[1], KEYS[2], ARGV[1])
return tonumber(redis.call('GET', KEYS[2]))
