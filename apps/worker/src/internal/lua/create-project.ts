import { defineScript } from '../scripts.js';

/**
 * Creates a project if its id is free.
 * KEYS[1] project hash, KEYS[2] projects index (zset), KEYS[3] transitions list
 * ARGV[1] project id, ARGV[2] created-at ms, ARGV[3] transition JSON, then field/value pairs
 * Returns 1 when created, 0 when the id exists.
 */
export const createProjectScript = defineScript(
  'create-project',
  3,
  `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('RPUSH', KEYS[3], ARGV[3])
return 1
`,
);
