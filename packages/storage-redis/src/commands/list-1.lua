--[[
  Lists a directory up to a depth from the directory index (HGETALL per directory shown):
  cost is proportional to the entries returned, never to the keyspace.

  KEYS[1] meta hash (only routes the call to the namespace's slot)
  ARGV[1..3] key prefixes (see includes/lib.lua)
  ARGV[4] directory store path ('' = root)
  ARGV[5] depth (1 = direct children)
  ARGV[6] '1' to skip names starting with '.' and 'node_modules' (and everything below them)

  Returns { 0, path1, value1, depth1, path2, ... } where value is the index value
  ('f,<size>,<mtime>' | 'd,<mtime>'), unsorted; { 1 } not found; { 4 } a file.
]]
--- @include "lib"

local root, maxDepth, skipHidden = ARGV[4], tonumber(ARGV[5]), ARGV[6] == '1'
if root ~= '' then
  local kind = lookup(root)
  if kind == nil then
    return { NOT_FOUND }
  elseif kind == 'f' then
    return { NOT_A_DIRECTORY }
  end
end

local result = { OK }
local queue, depths = { root }, { 0 }
local index = 1
while index <= #queue do
  local directory, depth = queue[index], depths[index] + 1
  local entries = redis.call('HGETALL', CHILDREN .. directory)
  for i = 1, #entries, 2 do
    local name, value = entries[i], entries[i + 1]
    if not (skipHidden and (string.sub(name, 1, 1) == '.' or name == 'node_modules')) then
      local child = joinPath(directory, name)
      result[#result + 1] = child
      result[#result + 1] = value
      result[#result + 1] = depth
      if depth < maxDepth and string.sub(value, 1, 1) == 'd' then
        queue[#queue + 1] = child
        depths[#depths + 1] = depth
      end
    end
  end
  index = index + 1
end
return result
