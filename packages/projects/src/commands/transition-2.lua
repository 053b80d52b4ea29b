--[[
  Moves a project to a new status if its current status is one of the allowed ones, and records
  the timestamped transition in the same step.

  KEYS[1] project hash
  KEYS[2] transitions list
  ARGV[1] new status
  ARGV[2] reason ('' = none)
  ARGV[3] now ms
  ARGV[4] allowed current statuses, comma separated ('*' = any)
  ARGV[5] transitions kept

  Returns { MOVED, previous }, { NOT_ALLOWED, current } or { MISSING, '' }.
]]
--- @include "status"

local current = redis.call('HGET', KEYS[1], 'status')
if not current then return { MISSING, '' } end
if ARGV[4] ~= '*' then
  local allowed = false
  for status in string.gmatch(ARGV[4], '[^,]+') do
    if status == current then allowed = true end
  end
  if not allowed then return { NOT_ALLOWED, current } end
end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'statusReason', ARGV[2], 'statusAt', ARGV[3])
local entry = cjson.encode({ at = tonumber(ARGV[3]), from = current, to = ARGV[1], reason = ARGV[2] })
redis.call('RPUSH', KEYS[2], entry)
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[5]), -1)
return { MOVED, current }
