--[[
  Writes a whole file: create (no overwrite), overwrite, or compare-and-set on the file's
  version (the commit step of `edit`). Checks parents and quotas before changing anything, then
  updates the file, the directory index, usage, the access time, the history and the feed.

  KEYS[1] meta hash (bytes, files, seq, epoch, rootm)
  KEYS[2] access-time index (zset)
  KEYS[3] change feed (stream)
  ARGV[1..3] key prefixes (see includes/lib.lua)
  ARGV[4] store path (never the root)
  ARGV[5] content
  ARGV[6] mode: 'create' | 'overwrite' | 'cas'
  ARGV[7] expected version for 'cas' (ignored otherwise); versions are strings '<epoch>:<seq>'
  ARGV[8] max file bytes (-1 = unlimited)
  ARGV[9] max total bytes (-1 = unlimited)
  ARGV[10] max files (-1 = unlimited)
  ARGV[11] history depth (0 = off)
  ARGV[12] feed max length (0 = off)
  ARGV[13] command recorded in the feed and history
  ARGV[14] session ('' = none)

  Returns { 0, version, mtime } on success;
          { 9, currentVersion, currentContent } when 'cas' saw another version;
          { 6 | 7 | 8, limit } when a quota would be exceeded;
          { 1 | 2 | 3 | 4 } for not_found, exists, is_directory, not_a_directory.
]]
--- @include "lib"

local path, content, mode = ARGV[4], ARGV[5], ARGV[6]
local maxFileBytes, maxTotalBytes, maxFiles = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
local historyDepth = tonumber(ARGV[11])
local command, session = ARGV[13], ARGV[14]

local kind, oldSize = lookup(path)
if kind == 'd' then
  if mode == 'create' then
    return { EXISTS }
  end
  return { IS_DIRECTORY }
end
local missing = {}
if kind == 'f' then
  if mode == 'create' then
    return { EXISTS }
  end
  if mode == 'cas' then
    local current = redis.call('HMGET', FILES .. path, 'v', 'c')
    if current[1] ~= ARGV[7] then
      return { CONFLICT, current[1], current[2] }
    end
  end
else
  if mode == 'cas' then
    return { NOT_FOUND }
  end
  local status
  status, missing = checkParents(path)
  if status ~= OK then
    return { status }
  end
end

local size = string.len(content)
if maxFileBytes >= 0 and size > maxFileBytes then
  return { QUOTA_FILE_BYTES, maxFileBytes }
end
local usage = redis.call('HMGET', KEYS[1], 'bytes', 'files', 'epoch')
local bytes, files = tonumber(usage[1] or '0'), tonumber(usage[2] or '0')
if kind == nil and maxFiles >= 0 and files + 1 > maxFiles then
  return { QUOTA_FILES, maxFiles }
end
if maxTotalBytes >= 0 and size > oldSize and bytes - oldSize + size > maxTotalBytes then
  return { QUOTA_TOTAL_BYTES, maxTotalBytes }
end

-- Every check passed: from here on the script only writes.
local now = nowMs()
-- Versions are '<epoch>:<seq>'. The epoch (server time in microseconds when the namespace got its
-- first write) keeps versions unique even after the namespace is cleared and the counter restarts,
-- so a cached (path, version) always names exactly one content.
local epoch = usage[3]
if not epoch then
  local time = redis.call('TIME')
  epoch = time[1] .. string.format('%06d', tonumber(time[2]))
  redis.call('HSET', KEYS[1], 'epoch', epoch, 'rootm', now)
end
local version = epoch .. ':' .. redis.call('HINCRBY', KEYS[1], 'seq', 1)
createDirectories(missing, now)
local parent, name = splitPath(path)
redis.call('HSET', CHILDREN .. parent, name, 'f,' .. size .. ',' .. now)
redis.call('HSET', FILES .. path, 'c', content, 'v', version)
redis.call('HINCRBY', KEYS[1], 'bytes', size - oldSize)
if kind == nil then
  redis.call('HINCRBY', KEYS[1], 'files', 1)
end
redis.call('ZADD', KEYS[2], now, path)
if historyDepth > 0 then
  local header = version .. '\n' .. now .. '\n' .. size .. '\n' .. command .. '\n' .. session .. '\n'
  redis.call('LPUSH', HISTORY .. path, header .. content)
  redis.call('LTRIM', HISTORY .. path, 0, historyDepth - 1)
end
local fields = { 'at', now, 'command', command, 'path', path, 'bytes', size }
if session ~= '' then
  fields[#fields + 1] = 'session'
  fields[#fields + 1] = session
end
appendFeed(KEYS[3], ARGV[12], fields)
return { OK, version, now }
