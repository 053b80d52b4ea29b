--[[
  Applies a session's writes to its project only while the session still holds the project's
  lease (docs/operations.md "Fencing"): the check and the writes are one step, so a session that
  lost its lease (a partition, a stall) can never land a write after its replacement took over,
  however late its commands arrive.

  KEYS[1] the project's lease (its value is the holder's fencing token)
  ARGV[1] the writer's fencing token
  ARGV[2] JSON array of writes, each [command, key, argument...]: HSET, HINCRBY, HINCRBYFLOAT,
          HDEL, RPUSH, LTRIM, XADD, ZADD, ZREM or DEL on keys of the project (its record,
          transcripts, guidance acknowledgements), or ['TOUCH', changes, version, id]
          (the change feed, as touch-project-2.lua). Every key carries the prefix's {hash tag},
          so all of them live in KEYS[1]'s Cluster slot (as the index keys of transition-4.lua).

  Returns { OWNED, reply... } (one reply per write, in order) or { NOT_OWNED } when the lease
  is gone or held by another token (nothing is written).
]]
--- @include "status"
--- @include "index"

if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return { NOT_OWNED }
end
local ALLOWED = { HSET = true, HINCRBY = true, HINCRBYFLOAT = true, HDEL = true, RPUSH = true,
  LTRIM = true, XADD = true, ZADD = true, ZREM = true, DEL = true }
local writes = cjson.decode(ARGV[2])
local replies = { OWNED }
for index, write in ipairs(writes) do
  local command = write[1]
  if command == 'TOUCH' then
    touch(write[2], write[3], write[4])
    replies[index + 1] = 1
  elseif ALLOWED[command] then
    replies[index + 1] = redis.call(unpack(write))
  else
    return redis.error_reply('fenced-batch: command not allowed: ' .. tostring(command))
  end
end
return replies
