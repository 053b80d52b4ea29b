--[[
  Shared helpers, pasted into a script where it says `--- @include "lib"`.

  Every script that includes this file passes, as ARGV[1..5], the key prefixes of the
  directory index (`c:`), the file hashes (`f:`), the history lists (`h:`), the older versions
  kept whole (`x:`) and the file bodies (`b:`) of one namespace (built in src/keys.ts). Keys are
  derived only by appending a store path (or, for `x:`, a version) to those prefixes, so they
  share the namespace's {hash tag} and live in the same Cluster slot as KEYS[1].

  A body (`b:<path>`, and a kept version `x:<version>`) is a string: the version it holds,
  padded with spaces to HEADER bytes, then the content. So one GET answers a read with both.

  Status codes (mapped to StoreError codes in src/internal/status.ts):
    0 ok, 1 not_found, 2 exists, 3 is_directory, 4 not_a_directory, 5 into_itself,
    6 max file size, 7 max total bytes, 8 max files, 9 version conflict, 10 invalid_path,
    11 the staged content of a write is missing, 12 fenced (a newer session holds the namespace).

  Index values (in the parent directory's hash): 'f,<size>,<mtime>' or 'd,<mtime>'.
]]
local CHILDREN = ARGV[1]
local FILES = ARGV[2]
local HISTORY = ARGV[3]
local KEPT = ARGV[4]
local BODIES = ARGV[5]
local HEADER = 40

local OK, NOT_FOUND, EXISTS, IS_DIRECTORY, NOT_A_DIRECTORY, INTO_ITSELF = 0, 1, 2, 3, 4, 5
local QUOTA_FILE_BYTES, QUOTA_TOTAL_BYTES, QUOTA_FILES, CONFLICT, INVALID_PATH = 6, 7, 8, 9, 10
local STAGE_MISSING, FENCED = 11, 12

-- Fencing (docs/operations.md "Fencing"): the meta hash's 'fence' field holds the highest token
-- any writer presented. A writer with a lower token is refused (it was replaced); a higher one
-- raises the field. '' is an unfenced writer (the CLI, `baton run`): always allowed.
local function fenceAllows(meta, token)
  if token == nil or token == '' then
    return true
  end
  local mine = tonumber(token)
  local current = tonumber(redis.call('HGET', meta, 'fence') or '0')
  if mine < current then
    return false
  end
  if mine > current then
    redis.call('HSET', meta, 'fence', token)
  end
  return true
end

local function nowMs()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

-- 'a/b/c' -> 'a/b', 'c'; 'c' -> '', 'c'
local function splitPath(path)
  local parent, name = string.match(path, '^(.*)/([^/]+)$')
  if parent == nil then
    return '', path
  end
  return parent, name
end

local function joinPath(directory, name)
  if directory == '' then
    return name
  end
  return directory .. '/' .. name
end

-- Returns kind ('f' | 'd' | nil), size, mtime of a non-root path.
local function lookup(path)
  local parent, name = splitPath(path)
  local value = redis.call('HGET', CHILDREN .. parent, name)
  if not value then
    return nil, 0, 0
  end
  local kind = string.sub(value, 1, 1)
  if kind == 'f' then
    local size, mtime = string.match(value, '^f,(%d+),(%d+)$')
    return 'f', tonumber(size), tonumber(mtime)
  end
  return 'd', 4096, tonumber(string.sub(value, 3))
end

-- Checks the ancestors of `path`; returns a status and the missing directories (top-down).
local function checkParents(path)
  local missing = {}
  local parent = splitPath(path)
  if parent == '' then
    return OK, missing
  end
  local current = ''
  for segment in string.gmatch(parent, '[^/]+') do
    current = joinPath(current, segment)
    if #missing == 0 then
      local kind = lookup(current)
      if kind == 'f' then
        return NOT_A_DIRECTORY, missing
      elseif kind == nil then
        missing[#missing + 1] = current
      end
    else
      -- below a missing directory nothing exists
      missing[#missing + 1] = current
    end
  end
  return OK, missing
end

local function createDirectories(missing, now)
  for _, directory in ipairs(missing) do
    local parent, name = splitPath(directory)
    redis.call('HSET', CHILDREN .. parent, name, 'd,' .. now)
  end
end

local function appendFeed(feedKey, maxLength, fields)
  if tonumber(maxLength) > 0 then
    redis.call('XADD', feedKey, 'MAXLEN', '~', maxLength, '*', unpack(fields))
  end
end

-- Walks the subtree below directory `root`: returns every directory (root included) and every
-- file as { path, size } tables.
local function walk(root)
  local directories, files = { root }, {}
  local index = 1
  while index <= #directories do
    local directory = directories[index]
    local entries = redis.call('HGETALL', CHILDREN .. directory)
    for i = 1, #entries, 2 do
      local child = joinPath(directory, entries[i])
      local value = entries[i + 1]
      if string.sub(value, 1, 1) == 'd' then
        directories[#directories + 1] = child
      else
        files[#files + 1] = { child, tonumber(string.match(value, '^f,(%d+),')) }
      end
    end
    index = index + 1
  end
  return directories, files
end

-- A file's history sizes ('hs'): one entry per older version, newest first, '<bytes>' for one
-- kept inline in the history list (a delta) or '<bytes>:<version>' for one kept whole in its own
-- key KEPT .. version (moved there by RENAME, so its bytes never pass through a script).
local function eachHistoryEntry(sizes)
  local entries = {}
  for entry in string.gmatch(sizes or '', '[^,]+') do
    local bytes, version = string.match(entry, '^(%d+):?(.*)$')
    entries[#entries + 1] = { tonumber(bytes), version, entry }
  end
  return entries
end

-- Removes the kept versions named in `entries` from index `first` on.
local function deleteKept(entries, first)
  for index = first, #entries do
    local version = entries[index][2]
    if version ~= '' then
      redis.call('DEL', KEPT .. version)
    end
  end
end

-- Removes a file's history: the list and the versions kept in keys of their own.
local function deleteHistory(path, sizes)
  deleteKept(eachHistoryEntry(sizes), 1)
  redis.call('DEL', HISTORY .. path)
end

-- Removes a file with its body and history (not its index entry, usage or access time).
local function deleteFileKeys(path)
  deleteHistory(path, redis.call('HGET', FILES .. path, 'hs'))
  redis.call('DEL', FILES .. path, BODIES .. path)
end

-- The body header of `version`.
local function bodyHeader(version)
  return version .. string.rep(' ', HEADER - string.len(version))
end

