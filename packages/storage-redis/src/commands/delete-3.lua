--[[
  Deletes a file, or a directory with everything below it (found through the directory index),
  including bodies, history and access times, and adjusts usage. The entry leaves its parent's index.

  KEYS[1] meta hash
  KEYS[2] access-time index (zset)
  KEYS[3] change feed (stream)
  ARGV[1..5] key prefixes (see includes/lib.lua)
  ARGV[6] store path (never the root)
  ARGV[7] feed max length (0 = off)
  ARGV[8] command recorded in the feed
  ARGV[9] session ('' = none)
  ARGV[10] fencing token ('' = unfenced; see fenceAllows in includes/lib.lua)

  Returns { 0, filesRemoved, bytesRemoved }, { 1 } when nothing is there, or { 12 } when a
  writer with a higher fencing token replaced this one.
]]
--- @include "lib"

local path, command, session = ARGV[6], ARGV[8], ARGV[9]
if not fenceAllows(KEYS[1], ARGV[10]) then
  return { FENCED }
end
local kind, size = lookup(path)
if kind == nil then
  return { NOT_FOUND }
end

local directories, files
if kind == 'f' then
  directories, files = {}, { { path, size } }
else
  directories, files = walk(path)
end

local bytes = 0
for _, file in ipairs(files) do
  deleteFileKeys(file[1])
  redis.call('ZREM', KEYS[2], file[1])
  bytes = bytes + file[2]
end
for _, directory in ipairs(directories) do
  redis.call('DEL', CHILDREN .. directory)
end
local parent, name = splitPath(path)
redis.call('HDEL', CHILDREN .. parent, name)
redis.call('HINCRBY', KEYS[1], 'bytes', 0 - bytes)
redis.call('HINCRBY', KEYS[1], 'files', 0 - #files)

local fields = { 'at', nowMs(), 'command', command, 'path', path, 'bytes', 0 }
if session ~= '' then
  fields[#fields + 1] = 'session'
  fields[#fields + 1] = session
end
appendFeed(KEYS[3], ARGV[7], fields)
return { OK, #files, bytes }
