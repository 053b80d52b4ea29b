--[[
  Sets a list entry only if it still holds the value the caller read (compare-and-set), so a
  migration rewriting an entry never undoes a write made since its read, nor writes over an
  entry a trim moved to that index.

  KEYS[1] list
  ARGV[1] index
  ARGV[2] the value read
  ARGV[3] the new value

  Returns OWNED when replaced, NOT_OWNED when the entry at the index changed (or is gone).
]]
--- @include "status"

if redis.call('LINDEX', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('LSET', KEYS[1], ARGV[1], ARGV[3])
  return OWNED
end
return NOT_OWNED
