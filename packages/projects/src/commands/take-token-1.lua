--[[
  Takes one token from a bucket shared by every worker. Time comes from the Redis server, so
  workers on machines with skewed clocks still share one rate.

  KEYS[1] bucket hash
  ARGV[1] refill rate per second
  ARGV[2] burst (capacity)

  Returns 0 when a token was taken, otherwise the milliseconds to wait before trying again.
]]

local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local tokens = tonumber(redis.call('HGET', KEYS[1], 'tokens'))
local stamp = tonumber(redis.call('HGET', KEYS[1], 'ts'))
if tokens == nil or stamp == nil then
  tokens = burst
  stamp = now
end
tokens = math.min(burst, tokens + math.max(0, now - stamp) * rate / 1000)
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = math.ceil((1 - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 60000)
return wait
