--[[
  Lists a directory up to a depth from the directory index (one HGETALL per directory shown):
  cost is proportional to the entries returned, never to the keyspace. The index hashes are
  returned as they are; the client filters, parses and sorts them.

  KEYS[1] meta hash (only routes the call to the namespace's slot)
  ARGV[1..5] key prefixes (see includes/lib.lua)
  ARGV[6] directory store path ('' = root)
  ARGV[7] depth (1 = direct children)
  ARGV[8] '1' to skip names starting with '.' and 'node_modules': hidden directories are not
          descended into (the client drops the hidden names themselves)

  Returns { 0, directory1, depth1, 'name\0value\0name\0value...', directory2, ... } where depth
  is the depth of the directory's children and value the index value ('f,<size>,<mtime>' |
  'd,<mtime>'); store paths never contain NUL (the store refuses them). { 1 } not found; { 4 } a file.
]]
--- @include "lib"

local root, maxDepth, skipHidden = ARGV[6], tonumber(ARGV[7]), ARGV[8] == '1'
if root ~= '' then
  local kind = lookup(root)
  if kind == nil then
    return { NOT_FOUND }
  elseif kind == 'f' then
    return { NOT_A_DIRECTORY }
  end
end

local result = { OK }
if maxDepth < 1 then
  return result
end
local queue, depths = { root }, { 1 }
local index = 1
local DIRECTORY = string.byte('d')
local DOT = string.byte('.')
while index <= #queue do
  local directory, depth = queue[index], depths[index]
  local entries = redis.call('HGETALL', CHILDREN .. directory)
  result[#result + 1] = directory
  result[#result + 1] = depth
  -- One string per directory: the client splits it natively instead of decoding 2 replies per entry.
  result[#result + 1] = table.concat(entries, '\0')
  if depth < maxDepth then
    for i = 1, #entries, 2 do
      if string.byte(entries[i + 1], 1) == DIRECTORY then
        local name = entries[i]
        if not (skipHidden and (string.byte(name, 1) == DOT or name == 'node_modules')) then
          queue[#queue + 1] = joinPath(directory, name)
          depths[#depths + 1] = depth + 1
        end
      end
    end
  end
  index = index + 1
end
return result
