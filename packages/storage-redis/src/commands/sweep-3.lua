--[[
  Expiry sweep: removes up to a batch of files whose last read or write is older than a cutoff,
  oldest first, using the access-time index. Atomic per batch, so a file written or read while
  the sweep runs is either refreshed before (and kept) or removed before the write (which then
  recreates it). Directories stay, as after any delete.

  KEYS[1] meta hash
  KEYS[2] access-time index (zset)
  KEYS[3] change feed (stream)
  ARGV[1..5] key prefixes (see includes/lib.lua)
  ARGV[6] idle time in ms: files last accessed before (server now - this) are removed
  ARGV[7] batch size
  ARGV[8] feed max length (0 = off)
  ARGV[9] absolute cutoff in epoch ms ('' = use ARGV[6]); files accessed before it are removed

  Returns { 0, path1, path2, ... } (the removed files).
]]
--- @include "lib"

local now = nowMs()
local cutoff = now - tonumber(ARGV[6])
if ARGV[9] ~= '' then
  cutoff = tonumber(ARGV[9])
end
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. cutoff, 'LIMIT', 0, tonumber(ARGV[7]))
local result = { OK }
local bytes, files = 0, 0
for _, path in ipairs(expired) do
  redis.call('ZREM', KEYS[2], path)
  local kind, size = lookup(path)
  if kind == 'f' then
    local parent, name = splitPath(path)
    deleteFileKeys(path)
    redis.call('HDEL', CHILDREN .. parent, name)
    bytes = bytes + size
    files = files + 1
    result[#result + 1] = path
    appendFeed(KEYS[3], ARGV[8], { 'at', now, 'command', 'expire', 'path', path, 'bytes', 0 })
  end
end
if files > 0 then
  redis.call('HINCRBY', KEYS[1], 'bytes', 0 - bytes)
  redis.call('HINCRBY', KEYS[1], 'files', 0 - files)
end
return result
