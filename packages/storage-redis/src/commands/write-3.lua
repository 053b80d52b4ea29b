--[[
  Writes a whole file: create (no overwrite), overwrite, or compare-and-set on the file's
  version (the commit step of `edit`). Checks parents and quotas before changing anything, then
  updates the file, the directory index, usage, the access time, the history and the feed.

  History keeps the file's older versions only (the current one is the file hash itself), newest
  first, each as a header and a payload. When the caller knows the content being replaced (ARGV[15]
  names its version and that is still the current one) the payload is the caller's reverse delta
  (ARGV[16], a few bytes for an edit) instead of a copy of the old file; otherwise it is the old
  content itself. The list keeps at most depth - 1 entries and at most ARGV[17] payload bytes, the
  newest first; the entries' payload sizes are kept in the file hash ('hs') so trimming reads nothing.
  Entry: '<version>\n<at>\n<bytes>\n<command>\n<session>\n<kind>\n<payload>', kind 'd' (delta
  against the next newer version) or 'f' (full content). The file hash's 'm' field holds the
  current version's '<at>\n<bytes>\n<command>\n<session>'.

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
  ARGV[15] version the delta was computed against ('' = no delta)
  ARGV[16] reverse delta turning the new content back into that version
  ARGV[17] history byte budget per file (payload bytes of the older versions kept)

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
local deltaBase, delta, historyBytes = ARGV[15], ARGV[16], tonumber(ARGV[17])

local kind, oldSize = lookup(path)
if kind == 'd' then
  if mode == 'create' then
    return { EXISTS }
  end
  return { IS_DIRECTORY }
end
local missing = {}
-- The replaced version's id, header and history sizes (files only).
local previous
if kind == 'f' then
  if mode == 'create' then
    return { EXISTS }
  end
  previous = redis.call('HMGET', FILES .. path, 'v', 'm', 'hs')
  if mode == 'cas' and previous[1] ~= ARGV[7] then
    return { CONFLICT, previous[1], redis.call('HGET', FILES .. path, 'c') }
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
local usage = redis.call('HMGET', KEYS[1], 'bytes', 'files', 'epoch', 'seq')
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
local seq = tonumber(usage[4] or '0') + 1
-- Usage and the sequence are read above and written back in one command.
local meta = { 'seq', seq, 'bytes', bytes - oldSize + size }
if kind == nil then
  meta[5], meta[6] = 'files', files + 1
end
if not epoch then
  local time = redis.call('TIME')
  epoch = time[1] .. string.format('%06d', tonumber(time[2]))
  meta[#meta + 1], meta[#meta + 2] = 'epoch', epoch
  meta[#meta + 1], meta[#meta + 2] = 'rootm', now
end
redis.call('HSET', KEYS[1], unpack(meta))
local version = epoch .. ':' .. seq
createDirectories(missing, now)
local parent, name = splitPath(path)
redis.call('HSET', CHILDREN .. parent, name, 'f,' .. size .. ',' .. now)
local sizes = ''
if previous ~= nil and previous[2] and historyDepth > 1 then
  local payload, entryKind = delta, 'd'
  if deltaBase == '' or deltaBase ~= previous[1] then
    payload, entryKind = redis.call('HGET', FILES .. path, 'c'), 'f'
  end
  local length = string.len(payload)
  if length <= historyBytes then
    redis.call('LPUSH', HISTORY .. path, previous[1] .. '\n' .. previous[2] .. '\n' .. entryKind .. '\n' .. payload)
    -- Keep the newest entries that fit both the depth and the byte budget.
    local kept, total, list = 1, length, { length }
    for entrySize in string.gmatch(previous[3] or '', '%d+') do
      local bytesOfEntry = tonumber(entrySize)
      if kept >= historyDepth - 1 or total + bytesOfEntry > historyBytes then
        break
      end
      kept, total = kept + 1, total + bytesOfEntry
      list[kept] = bytesOfEntry
    end
    redis.call('LTRIM', HISTORY .. path, 0, kept - 1)
    sizes = table.concat(list, ',')
  else
    -- An old version larger than the whole budget: nothing older can be rebuilt without it.
    redis.call('DEL', HISTORY .. path)
  end
elseif previous ~= nil and (not previous[2] or (previous[3] or '') ~= '') then
  -- History turned off, or a file written before headers were kept: its list cannot be rebuilt.
  redis.call('DEL', HISTORY .. path)
end
redis.call('HSET', FILES .. path, 'c', content, 'v', version, 'm', now .. '\n' .. size .. '\n' .. command .. '\n' .. session, 'hs', sizes)
redis.call('ZADD', KEYS[2], now, path)
local fields = { 'at', now, 'command', command, 'path', path, 'bytes', size }
if session ~= '' then
  fields[#fields + 1] = 'session'
  fields[#fields + 1] = session
end
appendFeed(KEYS[3], ARGV[12], fields)
return { OK, version, now }
