import { defineScript } from '../scripts.js';

/**
 * Moves a project to a new status if its current status is one of the allowed ones.
 * KEYS[1] project hash, KEYS[2] transitions list
 * ARGV[1] new status, ARGV[2] reason ('' = none), ARGV[3] now ms,
 * ARGV[4] allowed current statuses, comma separated ('*' = any), ARGV[5] max transitions kept
 * Returns {1, previous} when moved, {0, current} when the current status is not allowed,
 * {-1, ''} when the project does not exist.
 */
export const transitionScript = defineScript(
  'transition',
  2,
  `
local current = redis.call('HGET', KEYS[1], 'status')
if not current then return {-1, ''} end
if ARGV[4] ~= '*' then
  local allowed = false
  for status in string.gmatch(ARGV[4], '[^,]+') do
    if status == current then allowed = true end
  end
  if not allowed then return {0, current} end
end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'statusReason', ARGV[2], 'statusAt', ARGV[3])
local entry = cjson.encode({at = tonumber(ARGV[3]), from = current, to = ARGV[1], reason = ARGV[2]})
redis.call('RPUSH', KEYS[2], entry)
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[5]), -1)
return {1, current}
`,
);
