--[[
  Moves the content of a file written before bodies had keys of their own (the file hash's 'c'
  field, its version in 'v') into the file's body, once; run by the memory-bodies migration
  (`moveContentToBodies`), never on a read path.

  KEYS[1] the file hash (`<base>f:<path>`)
  KEYS[2] the file's body (`<base>b:<path>`)

  Returns 1 when content was moved, 0 when the file had none in its hash (already moved, or
  written with a body). A body that is already there is newer than the hash's copy: it stays,
  and the copy is dropped.
]]
local HEADER = 40

local legacy = redis.call('HMGET', KEYS[1], 'c', 'v')
if not legacy[1] then
  return 0
end
if redis.call('EXISTS', KEYS[2]) == 0 then
  local version = legacy[2] or ''
  redis.call('SET', KEYS[2], version .. string.rep(' ', HEADER - string.len(version)) .. legacy[1])
end
redis.call('HDEL', KEYS[1], 'c')
return 1
