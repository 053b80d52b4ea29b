--[[
  Writes a whole file: create (no overwrite), overwrite, or compare-and-set on the file's
  version (the commit step of `edit`). Checks parents and quotas before changing anything, then
  updates the file, the directory index, usage, the access time, the history and the feed.

  Small content (below 32 KB) is ARGV[20]. Larger content never passes through the script: the
  client SETEXes it, behind a blank header of HEADER bytes, into a stage key of its own (KEYS[4],
  with an expiry) in the same round trip, just before this script, which writes the version into
  the header (SETRANGE, in place) and renames the stage to the body (a Lua argument of 100 KB
  costs Redis more than the whole write). Every refusal deletes the stage.

  History keeps the file's older versions only (the current one is the body), newest first, each
  as a header and a payload. When the caller knows the content being replaced (ARGV[16] names its
  version and that is still the current one) the payload is the caller's reverse delta (ARGV[17],
  a few bytes for an edit); otherwise the old body itself is renamed to KEPT .. <its version> and
  the entry's payload is empty. The list keeps at most depth - 1 entries and at most ARGV[18]
  payload bytes, the newest first; the entries' sizes (and which versions are kept in keys of
  their own) are in the file hash's 'hs' field (see eachHistoryEntry), so trimming reads nothing.
  Entry: '<version>\n<at>\n<bytes>\n<command>\n<session>\n<kind>\n<payload>', kind 'd' (delta
  against the next newer version), 'k' (content in KEPT .. version) or 'f' (full content inline,
  written by earlier versions of this script). The file hash holds 'v' (the current version) and
  'm' (its header: '<at>\n<bytes>\n<command>\n<session>').

  KEYS[1] meta hash (bytes, files, seq, epoch, rootm)
  KEYS[2] access-time index (zset)
  KEYS[3] change feed (stream)
  KEYS[4] write stage: HEADER blank bytes and then the new content (unused with ARGV[20])
  ARGV[1..5] key prefixes (see includes/lib.lua)
  ARGV[6] store path (never the root)
  ARGV[7] mode: 'create' | 'overwrite' | 'cas'
  ARGV[8] expected version for 'cas' (ignored otherwise); versions are strings '<epoch>:<seq>'
  ARGV[9] max file bytes (-1 = unlimited)
  ARGV[10] max total bytes (-1 = unlimited)
  ARGV[11] max files (-1 = unlimited)
  ARGV[12] history depth (0 = off)
  ARGV[13] feed max length (0 = off)
  ARGV[14] command recorded in the feed and history
  ARGV[15] session ('' = none)
  ARGV[16] version the delta was computed against ('' = no delta)
  ARGV[17] reverse delta turning the new content back into that version
  ARGV[18] history byte budget per file (payload bytes of the older versions kept)
  ARGV[19] fencing token ('' = unfenced; see fenceAllows in includes/lib.lua)
  ARGV[20] the new content, if small; absent when it is staged in KEYS[4]

  Returns { 0, version, mtime } on success;
          { 9, currentVersion, currentBody } when 'cas' saw another version;
          { 6 | 7 | 8, limit } when a quota would be exceeded;
          { 1 | 2 | 3 | 4 } for not_found, exists, is_directory, not_a_directory;
          { 11 } when the stage is not there (it expired before the script ran);
          { 12 } when a writer with a higher fencing token replaced this one.
]]
--- @include "lib"

local STAGE = KEYS[4]
local path, mode = ARGV[6], ARGV[7]
local maxFileBytes, maxTotalBytes, maxFiles = tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])
local historyDepth = tonumber(ARGV[12])
local command, session = ARGV[14], ARGV[15]
local deltaBase, delta, historyBytes = ARGV[16], ARGV[17], tonumber(ARGV[18])
local inline = ARGV[20]

local result = (function()
if not fenceAllows(KEYS[1], ARGV[19]) then
  return { FENCED }
end
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
  if mode == 'cas' and previous[1] ~= ARGV[8] then
    return { CONFLICT, previous[1], redis.call('GET', BODIES .. path) }
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

local size
if inline then
  size = string.len(inline)
else
  local staged = redis.call('STRLEN', STAGE)
  if staged < HEADER then
    return { STAGE_MISSING }
  end
  size = staged - HEADER
end
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
local older = eachHistoryEntry(previous and previous[3])
if previous ~= nil and previous[2] and historyDepth > 1 then
  local payload, entryKind, length, entry = delta, 'd', string.len(delta), nil
  if deltaBase == '' or deltaBase ~= previous[1] then
    payload, entryKind, length = '', 'k', oldSize
  end
  if length <= historyBytes then
    if entryKind == 'k' then
      -- The old body becomes the kept version, without a copy.
      redis.call('RENAME', BODIES .. path, KEPT .. previous[1])
      entry = length .. ':' .. previous[1]
    else
      entry = tostring(length)
    end
    redis.call('LPUSH', HISTORY .. path, previous[1] .. '\n' .. previous[2] .. '\n' .. entryKind .. '\n' .. payload)
    -- Keep the newest entries that fit both the depth and the byte budget.
    local kept, total, list = 1, length, { entry }
    for _, entryOlder in ipairs(older) do
      if kept >= historyDepth - 1 or total + entryOlder[1] > historyBytes then
        break
      end
      kept, total = kept + 1, total + entryOlder[1]
      list[kept] = entryOlder[3]
    end
    -- Entries past the kept ones leave the list; their own keys go with them.
    deleteKept(older, kept)
    redis.call('LTRIM', HISTORY .. path, 0, kept - 1)
    sizes = table.concat(list, ',')
  else
    -- An old version larger than the whole budget: nothing older can be rebuilt without it.
    deleteHistory(path, previous[3])
  end
elseif previous ~= nil and (not previous[2] or (previous[3] or '') ~= '') then
  -- History turned off, or a file written before headers were kept: its list cannot be rebuilt.
  deleteHistory(path, previous[3])
end
if inline then
  redis.call('SET', BODIES .. path, bodyHeader(version) .. inline)
else
  redis.call('SETRANGE', STAGE, 0, bodyHeader(version))
  redis.call('PERSIST', STAGE)
  redis.call('RENAME', STAGE, BODIES .. path)
end
redis.call('HSET', FILES .. path, 'v', version, 'm', now .. '\n' .. size .. '\n' .. command .. '\n' .. session, 'hs', sizes)
redis.call('ZADD', KEYS[2], now, path)
local fields = { 'at', now, 'command', command, 'path', path, 'bytes', size }
if session ~= '' then
  fields[#fields + 1] = 'session'
  fields[#fields + 1] = session
end
appendFeed(KEYS[3], ARGV[13], fields)
return { OK, version, now }
end)()
-- A refused write leaves no stage behind (a successful one renamed it to the body).
if result[1] ~= OK and not inline then
  redis.call('DEL', STAGE)
end
return result
