--[[
  Moves a project to a new status if its current status is one of the allowed ones, records the
  timestamped transition, moves it in the index and records the change, all in the same step.

  KEYS[1] project hash
  KEYS[2] transitions list
  KEYS[3] change feed (zset id -> version)
  KEYS[4] change version counter
  KEYS[5] the project's lease (checked only with ARGV[8])
  ARGV[1] new status
  ARGV[2] reason ('' = none)
  ARGV[3] now ms
  ARGV[4] allowed current statuses, comma separated ('*' = any)
  ARGV[5] transitions kept
  ARGV[6] index key base (keys.ts projectIndexBase)
  ARGV[7] project id
  ARGV[8] the writer's fencing token ('' = unfenced: control calls); a fenced move happens only
          while KEYS[5] still holds it (docs/operations.md "Fencing")

  Returns { MOVED, previous }, { NOT_ALLOWED, current }, { MISSING, '' } or { FENCED, current }.
]]
--- @include "status"
--- @include "index"

local current = redis.call('HGET', KEYS[1], 'status')
if not current then return { MISSING, '' } end
if ARGV[8] ~= '' and redis.call('GET', KEYS[5]) ~= ARGV[8] then return { FENCED, current } end
if ARGV[4] ~= '*' then
  local allowed = false
  for status in string.gmatch(ARGV[4], '[^,]+') do
    if status == current then allowed = true end
  end
  if not allowed then return { NOT_ALLOWED, current } end
end
local created = redis.call('HGET', KEYS[1], 'createdAt') or '0'
local previous_at = redis.call('HGET', KEYS[1], 'statusAt') or created
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'statusReason', ARGV[2], 'statusAt', ARGV[3])
local entry = cjson.encode({ at = tonumber(ARGV[3]), from = current, to = ARGV[1], reason = ARGV[2] })
redis.call('RPUSH', KEYS[2], entry)
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[5]), -1)
index_remove(ARGV[6], ARGV[7], current, created, previous_at)
index_add(ARGV[6], ARGV[7], ARGV[1], created, ARGV[3])
touch(KEYS[3], KEYS[4], ARGV[7])
return { MOVED, current }
