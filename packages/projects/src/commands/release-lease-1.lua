--[[
  Deletes a lease only if the caller still owns it (compare-and-delete).

  KEYS[1] lease key
  ARGV[1] token

  Returns OWNED when deleted, NOT_OWNED otherwise.
]]
--- @include "status"

if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return OWNED
end
return NOT_OWNED
