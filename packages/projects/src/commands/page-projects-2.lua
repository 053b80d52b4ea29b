--[[
  Reads one index (keys.ts projectIndex) after a cursor, in order, keeping the members whose
  search text holds a needle. Reads at most ARGV[5] members so a search over a big fleet never
  holds Redis for long: the caller continues from the last member read.

  KEYS[1] index zset (every score 0, members `<sort key>:<id>` or `<id>`)
  KEYS[2] search hash (id -> lowercased id and goal)
  ARGV[1] 'asc' or 'desc'
  ARGV[2] cursor: read strictly after this member ('' = from the first)
  ARGV[3] matches wanted
  ARGV[4] needle, lowercased ('' = every member matches)
  ARGV[5] most members read

  Returns { exhausted (1 when the index ended), last member read ('' = none), match, ... }.
]]

local descending = ARGV[1] == 'desc'
local cursor = ARGV[2]
local wanted = tonumber(ARGV[3])
local needle = ARGV[4]
local budget = tonumber(ARGV[5])
local result = { 0, '' }
local found = 0
local last = ''

while found < wanted and budget > 0 do
  local chunk = math.min(budget, 200)
  if needle == '' then chunk = math.min(chunk, wanted - found) end
  local members
  if descending then
    local from = '+'
    if cursor ~= '' then from = '(' .. cursor end
    members = redis.call('ZRANGE', KEYS[1], from, '-', 'BYLEX', 'REV', 'LIMIT', 0, chunk)
  else
    local from = '-'
    if cursor ~= '' then from = '(' .. cursor end
    members = redis.call('ZRANGE', KEYS[1], from, '+', 'BYLEX', 'LIMIT', 0, chunk)
  end
  local texts = {}
  if needle ~= '' and #members > 0 then
    local ids = {}
    for i, member in ipairs(members) do ids[i] = string.match(member, '([^:]*)$') end
    texts = redis.call('HMGET', KEYS[2], unpack(ids))
  end
  for i, member in ipairs(members) do
    last = member
    local text = texts[i]
    if needle == '' or (text and string.find(text, needle, 1, true)) then
      found = found + 1
      result[#result + 1] = member
      if found >= wanted then break end
    end
  end
  budget = budget - #members
  if #members < chunk then
    if found < wanted or last == members[#members] then result[1] = 1 end
    break
  end
  cursor = last
end
result[2] = last
return result
