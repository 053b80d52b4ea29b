--[[
  Creates a project if its id is free.

  KEYS[1] project hash
  KEYS[2] projects index (zset scored by creation time)
  KEYS[3] transitions list
  ARGV[1] project id
  ARGV[2] created-at ms
  ARGV[3] first transition (JSON)
  ARGV[4..] field, value pairs of the project hash

  Returns CREATED, or EXISTS when the id is taken.
]]
--- @include "status"

if redis.call('EXISTS', KEYS[1]) == 1 then return EXISTS end
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('RPUSH', KEYS[3], ARGV[3])
return CREATED
