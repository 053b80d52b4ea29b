import { defineScript } from '../scripts.js';

/**
 * Extends a lease if the caller still owns it, and reports the project's status in the same
 * round trip so a cancelled project is noticed on the next heartbeat even if pub/sub was missed.
 * KEYS[1] lease key, KEYS[2] project hash
 * ARGV[1] token, ARGV[2] ttl ms
 * Returns {1, status} when extended, {0, status} when the lease belongs to someone else or expired.
 */
export const renewLeaseScript = defineScript(
  'renew-lease',
  2,
  `
local status = redis.call('HGET', KEYS[2], 'status') or ''
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, status}
end
return {0, status}
`,
);

/**
 * Deletes a lease only if the caller still owns it (compare-and-delete).
 * KEYS[1] lease key
 * ARGV[1] token
 * Returns 1 when deleted, 0 otherwise.
 */
export const releaseLeaseScript = defineScript(
  'release-lease',
  1,
  `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`,
);
