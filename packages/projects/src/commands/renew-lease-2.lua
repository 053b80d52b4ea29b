--[[
  Extends a lease if the caller still owns it, and reports the project's status in the same
  round trip so a cancelled project is noticed on the next heartbeat even if pub/sub was missed.

  KEYS[1] lease key
  KEYS[2] project hash
  ARGV[1] token
  ARGV[2] ttl ms

  Returns { OWNED, status } when extended, { NOT_OWNED, status } when the lease expired or
  belongs to someone else.
]]
--- @include "status"

local status = redis.call('HGET', KEYS[2], 'status') or ''
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return { OWNED, status }
end
return { NOT_OWNED, status }
