--[[
  Moves a file or a directory (with every descendant, its body, history and access times) to a new
  path, creating missing parents of the destination. Never overwrites: the destination must be
  free when the script runs, so of concurrent renames onto one destination exactly one wins.

  KEYS[1] meta hash
  KEYS[2] access-time index (zset)
  KEYS[3] change feed (stream)
  ARGV[1..5] key prefixes (see includes/lib.lua)
  ARGV[6] source store path (never the root)
  ARGV[7] destination store path (never the root)
  ARGV[8] feed max length (0 = off)
  ARGV[9] command recorded in the feed
  ARGV[10] session ('' = none)
  ARGV[11] fencing token ('' = unfenced; see fenceAllows in includes/lib.lua)

  Returns { 0, bytes } (bytes: the file's size, 0 for a directory);
          { 1 } source missing, { 2 } destination taken,
          { 4 } a parent of the destination is a file, { 5 } a directory into its own subtree,
          { 12 } a writer with a higher fencing token replaced this one.
]]
--- @include "lib"

local from, to, command, session = ARGV[6], ARGV[7], ARGV[9], ARGV[10]
if not fenceAllows(KEYS[1], ARGV[11]) then
  return { FENCED }
end
local kind, size = lookup(from)
if kind == nil then
  return { NOT_FOUND }
end
if from == to then
  return { EXISTS }
end
local fromPrefix = from .. '/'
if string.sub(to, 1, #fromPrefix) == fromPrefix then
  if kind == 'd' then
    return { INTO_ITSELF }
  end
  return { NOT_A_DIRECTORY }
end
local status, missing = checkParents(to)
if status ~= OK then
  return { status }
end
if #missing == 0 and lookup(to) ~= nil then
  return { EXISTS }
end

local now = nowMs()
local fromParent, fromName = splitPath(from)
local toParent, toName = splitPath(to)
local value = redis.call('HGET', CHILDREN .. fromParent, fromName)

local function moveFile(oldPath, newPath)
  if redis.call('EXISTS', BODIES .. oldPath) == 1 then
    redis.call('RENAME', BODIES .. oldPath, BODIES .. newPath)
  end
  redis.call('RENAME', FILES .. oldPath, FILES .. newPath)
  if redis.call('EXISTS', HISTORY .. oldPath) == 1 then
    redis.call('RENAME', HISTORY .. oldPath, HISTORY .. newPath)
  end
  local accessed = redis.call('ZSCORE', KEYS[2], oldPath)
  redis.call('ZREM', KEYS[2], oldPath)
  redis.call('ZADD', KEYS[2], accessed or now, newPath)
end

if kind == 'f' then
  moveFile(from, to)
else
  local directories, files = walk(from)
  for _, file in ipairs(files) do
    moveFile(file[1], to .. string.sub(file[1], #from + 1))
  end
  for _, directory in ipairs(directories) do
    -- index hashes hold child names only, so a directory's index moves as one key
    if redis.call('EXISTS', CHILDREN .. directory) == 1 then
      redis.call('RENAME', CHILDREN .. directory, CHILDREN .. to .. string.sub(directory, #from + 1))
    end
  end
  size = 0
end
redis.call('HDEL', CHILDREN .. fromParent, fromName)
createDirectories(missing, now)
redis.call('HSET', CHILDREN .. toParent, toName, value)

local fields = { 'at', now, 'command', command, 'path', from, 'newPath', to, 'bytes', size }
if session ~= '' then
  fields[#fields + 1] = 'session'
  fields[#fields + 1] = session
end
appendFeed(KEYS[3], ARGV[8], fields)
return { OK, size }
