--[[
  Takes a project's lease if nobody holds it, with a fencing token (docs/operations.md "Fencing"):
  the lease's value is a number from a counter shared by every project that only ever grows, so a
  session that took the lease later always holds a higher token than every session before it, of
  this project or any other, even after the project was deleted and created again.

  KEYS[1] lease key
  KEYS[2] fencing counter (shared by all projects)
  ARGV[1] ttl ms

  Returns { OWNED, token } when taken, { NOT_OWNED, remaining ttl ms } when someone holds it.
]]
--- @include "status"

if redis.call('EXISTS', KEYS[1]) == 1 then
  return { NOT_OWNED, redis.call('PTTL', KEYS[1]) }
end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], token, 'PX', ARGV[1])
return { OWNED, token }
