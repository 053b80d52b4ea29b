--[[
  Removes a project from the index and the search hash and records the change (its deletion),
  reading the sort keys from its hash before the hash itself is deleted.

  KEYS[1] project hash
  KEYS[2] change feed (zset id -> version)
  KEYS[3] change version counter
  ARGV[1] index key base (keys.ts projectIndexBase)
  ARGV[2] search hash key
  ARGV[3] project id

  Returns CREATED when it was indexed, MISSING when there was no project.
]]
--- @include "status"
--- @include "index"

local status = redis.call('HGET', KEYS[1], 'status')
if not status then return MISSING end
local created = redis.call('HGET', KEYS[1], 'createdAt') or '0'
local updated = redis.call('HGET', KEYS[1], 'statusAt') or created
index_remove(ARGV[1], ARGV[3], status, created, updated)
redis.call('HDEL', ARGV[2], ARGV[3])
touch(KEYS[2], KEYS[3], ARGV[3])
return CREATED
