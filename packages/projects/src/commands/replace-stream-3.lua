--[[
  Puts a rewritten copy of a stream in the stream's place (a migration's last step), only if the
  caller still holds the migration lock and the stream still ends with the entry the copy ends
  with: an entry appended since the copy was made would be lost by the rename, so the caller
  copies the new tail and calls again. The copy must also end with that entry and hold at least as
  many entries as the stream (appenders' trims only ever shorten the stream), so a partial copy
  (another runner's, or one cut short) is never taken. The copy takes the stream's last generated
  id, so an id handed out before is never handed out again, and loses the expiry it had while it
  was a copy (RENAME keeps it), so a killed runner's copy goes but the stream stays.

  KEYS[1] the stream
  KEYS[2] the rewritten copy (entry ids as in the stream)
  KEYS[3] the migration lock
  ARGV[1] id of the last entry copied
  ARGV[2] the caller's lock token

  Returns FENCED when the lock holds another token or none (nothing is changed), OWNED when the
  copy replaced the stream, NOT_OWNED when the stream has entries the copy lacks, the copy is not
  a whole copy ending at ARGV[1], or the stream or the copy is gone.
]]
--- @include "status"

if redis.call('GET', KEYS[3]) ~= ARGV[2] then return FENCED end
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('EXISTS', KEYS[2]) == 0 then
  return NOT_OWNED
end
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if last[1] == nil or last[1][1] ~= ARGV[1] then return NOT_OWNED end
local copied = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
if copied[1] == nil or copied[1][1] ~= ARGV[1] then return NOT_OWNED end
if redis.call('XLEN', KEYS[2]) < redis.call('XLEN', KEYS[1]) then return NOT_OWNED end
local info = redis.call('XINFO', 'STREAM', KEYS[1])
for at = 1, #info, 2 do
  if info[at] == 'last-generated-id' then redis.call('XSETID', KEYS[2], info[at + 1]) end
end
redis.call('RENAME', KEYS[2], KEYS[1])
redis.call('PERSIST', KEYS[1])
return OWNED
