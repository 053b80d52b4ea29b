--[[
  Adds a project stored before the index existed to the index, as its hash stands now (the status
  is read here, so a concurrent transition is never undone).

  KEYS[1] project hash
  KEYS[2] search hash
  ARGV[1] index key base (keys.ts projectIndexBase)
  ARGV[2] project id
  ARGV[3] search text (lowercased id and goal)

  Returns CREATED when indexed, MISSING when the project is gone.
]]
--- @include "status"
--- @include "index"

local status = redis.call('HGET', KEYS[1], 'status')
if not status then return MISSING end
local created = redis.call('HGET', KEYS[1], 'createdAt') or '0'
local updated = redis.call('HGET', KEYS[1], 'statusAt') or created
index_add(ARGV[1], ARGV[2], status, created, updated)
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return CREATED
