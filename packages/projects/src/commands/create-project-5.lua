--[[
  Creates a project if its id is free, indexes it and records the change.

  KEYS[1] project hash
  KEYS[2] projects index (zset scored by creation time)
  KEYS[3] transitions list
  KEYS[4] change feed (zset id -> version)
  KEYS[5] change version counter
  ARGV[1] project id
  ARGV[2] created-at ms
  ARGV[3] first transition (JSON)
  ARGV[4] index key base (keys.ts projectIndexBase)
  ARGV[5] search hash key (keys.ts projectSearch)
  ARGV[6] search text (lowercased id and goal)
  ARGV[7..] field, value pairs of the project hash

  Returns CREATED, or EXISTS when the id is taken.
]]
--- @include "status"
--- @include "index"

if redis.call('EXISTS', KEYS[1]) == 1 then return EXISTS end
for i = 7, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('RPUSH', KEYS[3], ARGV[3])
index_add(ARGV[4], ARGV[1], 'queued', ARGV[2], ARGV[2])
redis.call('HSET', ARGV[5], ARGV[1], ARGV[6])
touch(KEYS[4], KEYS[5], ARGV[1])
return CREATED
