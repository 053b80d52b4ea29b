--[[
  Sets a hash field only if it still holds the value the caller read (compare-and-set), so a
  migration rewriting a field never undoes a write made since its read.

  KEYS[1] hash
  ARGV[1] field
  ARGV[2] the value read
  ARGV[3] the new value

  Returns OWNED when replaced, NOT_OWNED when the field changed (or is gone) meanwhile.
]]
--- @include "status"

if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  return OWNED
end
return NOT_OWNED
