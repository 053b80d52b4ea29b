-- The project index and change feed (keys.ts: projectIndex, projectChanges, projectVersion).
-- Every index key is `<base><sort>:<status>` built from the prefix passed in, so it carries the
-- prefix's hash tag and stays in the slot of the keys the script declares.
local INDEX_SORTS = { 'created', 'updated', 'id' }

-- Members sort by bytes (ZRANGE BYLEX, every score 0): fixed-width milliseconds, then the id.
local function index_member(sort, id, created, updated)
  if sort == 'id' then return id end
  local ms = created
  if sort == 'updated' then ms = updated end
  return string.format('%015d', tonumber(ms) or 0) .. ':' .. id
end

local function index_add(base, id, status, created, updated)
  for _, sort in ipairs(INDEX_SORTS) do
    local member = index_member(sort, id, created, updated)
    redis.call('ZADD', base .. sort .. ':all', 0, member)
    redis.call('ZADD', base .. sort .. ':' .. status, 0, member)
  end
end

local function index_remove(base, id, status, created, updated)
  for _, sort in ipairs(INDEX_SORTS) do
    local member = index_member(sort, id, created, updated)
    redis.call('ZREM', base .. sort .. ':all', member)
    redis.call('ZREM', base .. sort .. ':' .. status, member)
  end
end

-- Readers remember the version they saw and ask for the ids scored above it.
local function touch(changes, version, id)
  local next_version = redis.call('INCR', version)
  redis.call('ZADD', changes, next_version, id)
end
