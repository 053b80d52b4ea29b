--[[
  Extends a lock only if the caller still holds it (compare-and-expire).

  KEYS[1] lock key
  ARGV[1] token
  ARGV[2] ttl ms

  Returns OWNED when extended, NOT_OWNED when the lock expired or belongs to someone else.
]]
--- @include "status"

if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return OWNED
end
return NOT_OWNED
